package dev.runbus.runs.internal.worker;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit: callers on many threads each hand in one item and wait; one thread writes every item that
 * arrived while the previous transaction was committing, in one transaction. Under load a commit carries
 * dozens of runs instead of one, which is what lets PostgreSQL keep up with the stream; when idle, an item
 * is committed at once.
 *
 * <p>If a batch fails, its items are committed one by one, so that one bad item (a constraint, a value the
 * database refuses) fails alone. Not when the database cannot be reached ({@link #isConnectionFailure}): every
 * item would wait for a connection again in turn, one thread for all of them, so a batch of k items would hold
 * its callers k connection timeouts long; the whole batch fails at once instead. After {@link #close()}, items
 * are committed on the caller's thread.
 */
public final class GroupCommitter<I, O> implements AutoCloseable {

    /** Writes a batch in one transaction (or one statement); returns one result per item, in order. */
    @FunctionalInterface
    interface BatchWork<I, O> {
        List<O> commit(List<I> items) throws SQLException;
    }

    private static final Logger log = LoggerFactory.getLogger(GroupCommitter.class);

    private record Pending<I, O>(I item, CompletableFuture<O> result) {
    }

    private final BatchWork<I, O> work;
    private final int maxBatch;
    /** Groups of items handed in together; a group is never split unless it is larger than a batch. */
    private final BlockingQueue<List<Pending<I, O>>> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean closed;

    GroupCommitter(String name, int maxBatch, BatchWork<I, O> work) {
        this.work = work;
        this.maxBatch = maxBatch;
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Commits the item (with whatever else is waiting) and returns its result. */
    O commit(I item) throws SQLException {
        return await(submit(item));
    }

    /**
     * Queues the item and returns at once; the future completes when its transaction committed (or failed). The
     * future's callbacks run on the committing thread unless an async variant is used: keep them short.
     */
    CompletableFuture<O> submit(I item) {
        return submitAll(List.of(item)).get(0);
    }

    /**
     * Queues the items as one group, committed in one transaction (with whatever else is waiting) when the group
     * fits in a batch; returns one future per item, in order. If the transaction fails, the items are committed
     * one by one, so each future says how its own item fared.
     */
    List<CompletableFuture<O>> submitAll(List<I> items) {
        List<Pending<I, O>> group = new ArrayList<>(items.size());
        List<CompletableFuture<O>> futures = new ArrayList<>(items.size());
        for (I item : items) {
            Pending<I, O> p = new Pending<>(item, new CompletableFuture<>());
            group.add(p);
            futures.add(p.result());
        }
        if (group.isEmpty()) {
            return futures;
        }
        queue.add(group);
        if (closed) {
            // The thread drains the queue once more after it sees the close; if it has already gone, commit here.
            joinQuietly();
            if (queue.remove(group)) {
                commitGroups(List.of(group));
            }
        }
        return futures;
    }

    private static <O> O await(CompletableFuture<O> result) throws SQLException {
        try {
            return result.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("interrupted while waiting for the commit", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof SQLException) {
                throw (SQLException) cause;
            }
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            throw new SQLException(cause);
        }
    }

    private void run() {
        List<List<Pending<I, O>>> groups = new ArrayList<>();
        while (true) {
            List<Pending<I, O>> first;
            try {
                first = queue.poll(50, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (first == null) {
                if (closed) {
                    // Whatever was queued before a caller could see the close: commit it, then stop.
                    queue.drainTo(groups);
                    commitGroups(groups);
                    return;
                }
                continue;
            }
            groups.add(first);
            int items = first.size();
            for (List<Pending<I, O>> next = items < maxBatch ? queue.poll() : null; next != null;
                 next = items < maxBatch ? queue.poll() : null) {
                groups.add(next);
                items += next.size();
            }
            commitGroups(groups);
            groups.clear();
        }
    }

    /** Commits the groups in transactions of at most {@code maxBatch} items, splitting only an oversized group. */
    private void commitGroups(List<List<Pending<I, O>>> groups) {
        List<Pending<I, O>> batch = new ArrayList<>();
        for (List<Pending<I, O>> group : groups) {
            if (!batch.isEmpty() && batch.size() + group.size() > maxBatch) {
                commitBatch(batch);
                batch = new ArrayList<>();
            }
            for (int from = 0; from < group.size(); from += maxBatch) {
                List<Pending<I, O>> part = group.subList(from, Math.min(group.size(), from + maxBatch));
                if (part.size() == maxBatch) {
                    commitBatch(part);
                } else {
                    batch.addAll(part);
                }
            }
        }
        if (!batch.isEmpty()) {
            commitBatch(batch);
        }
    }

    private void commitBatch(List<Pending<I, O>> batch) {
        List<I> items = new ArrayList<>(batch.size());
        batch.forEach(p -> items.add(p.item()));
        try {
            long start = System.nanoTime();
            List<O> results = work.commit(items);
            if (log.isTraceEnabled()) {
                log.trace("{} committed {} items in {} us", thread.getName(), items.size(),
                        (System.nanoTime() - start) / 1000);
            }
            for (int i = 0; i < batch.size(); i++) {
                batch.get(i).result().complete(results.get(i));
            }
        } catch (Throwable failed) {
            if (batch.size() == 1 || isConnectionFailure(failed)) {
                batch.forEach(p -> p.result().completeExceptionally(failed));
                return;
            }
            log.debug("a batch of {} failed; committing its items one by one", batch.size(), failed);
            for (Pending<I, O> p : batch) {
                try {
                    p.result().complete(work.commit(List.of(p.item())).get(0));
                } catch (Throwable alone) {
                    p.result().completeExceptionally(alone);
                }
            }
        }
    }

    /**
     * Whether the failure is about reaching the database rather than about the items: no connection from the
     * pool in time ({@link java.sql.SQLTransientConnectionException}, HikariCP's timeout), SQLState class 08
     * (connection exception), or 57P (the server shutting down), anywhere in the causes.
     */
    public static boolean isConnectionFailure(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.sql.SQLTransientConnectionException) {
                return true;
            }
            if (t instanceof SQLException) {
                String state = ((SQLException) t).getSQLState();
                if (state != null && (state.startsWith("08") || state.startsWith("57P"))) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Commits what is queued, then stops the thread; items submitted afterwards commit on the caller's thread. */
    @Override
    public void close() {
        closed = true;
        joinQuietly();
    }

    /** Waits for the thread to stop, at most 10 s (a commit stuck in the database must not hang a close). */
    private void joinQuietly() {
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
