package dev.runbus.runs.internal;

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
 * <p>If a batch fails, its items are committed one by one, so that one bad item fails alone. After
 * {@link #close()}, items are committed on the caller's thread.
 */
final class GroupCommitter<I, O> implements AutoCloseable {

    /** Writes a batch in one transaction; returns one result per item, in order. */
    @FunctionalInterface
    interface BatchWork<I, O> {
        List<O> commit(List<I> items) throws SQLException;
    }

    private static final Logger log = LoggerFactory.getLogger(GroupCommitter.class);

    private record Pending<I, O>(I item, CompletableFuture<O> result) {
    }

    private final BatchWork<I, O> work;
    private final int maxBatch;
    private final BlockingQueue<Pending<I, O>> queue = new LinkedBlockingQueue<>();
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
        if (closed) {
            return work.commit(List.of(item)).get(0);
        }
        CompletableFuture<O> result = new CompletableFuture<>();
        Pending<I, O> pending = new Pending<>(item, result);
        queue.add(pending);
        try {
            while (true) {
                try {
                    return result.get(100, TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.TimeoutException stillWaiting) {
                    // Closed between our check and our add, after the thread's last look: commit it here.
                    if (!thread.isAlive() && queue.remove(pending)) {
                        return work.commit(List.of(item)).get(0);
                    }
                }
            }
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
        List<Pending<I, O>> batch = new ArrayList<>(maxBatch);
        while (true) {
            Pending<I, O> first;
            try {
                first = queue.poll(50, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (first == null) {
                if (closed) {
                    return;
                }
                continue;
            }
            batch.add(first);
            queue.drainTo(batch, maxBatch - 1);
            commitBatch(batch);
            batch.clear();
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
            if (batch.size() == 1) {
                batch.get(0).result().completeExceptionally(failed);
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

    /** Commits what is queued, then stops the thread. */
    @Override
    public void close() {
        closed = true;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
