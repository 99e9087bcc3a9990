package dev.runbus.internal.delay;

import dev.runbus.RunbusException;
import dev.runbus.internal.deadletter.DeadLetterFields;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.RetryBackoff;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves due entries from the delay sets of the topics this bus subscribes to into their streams, on one thread
 * for the whole bus ({@code move_due.lua}: an atomic move per entry, so every bus can run it at once).
 *
 * <p>It keeps, per partition, when to look next: when the script says the next entry is due (on the server's
 * clock, as a wait from now), or after the poll interval when it does not know (an empty set may be filled by
 * another process). Entries this bus schedules are {@link #hint hinted} to it, so they are moved when due rather
 * than at the next poll; a full batch is followed by another call at once. Between looks the thread parks until
 * the earliest one. Once moved, an entry wakes a consumer blocked on the stream at once.
 *
 * <p>A failing call (Redis down, slot moving) is reported and that partition tried again with backoff; the
 * thread runs until close. Each partition's call has its own deadline (the command timeout from when it was sent): a
 * round waits {@value #ROUND_WAIT_MILLIS} ms at most for the answers, and a call still unanswered (its master
 * stalled) stays in flight, its partition not looked at again until it answers or times out, while the others are
 * moved on time (docs/architecture.md, rule 14).
 */
public final class DelayMover implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DelayMover.class);
    /** Entries per script call: short enough not to hold Redis up, long enough for a burst to go in a few calls. */
    static final int BATCH = 200;
    /** How long a round waits for answers before it leaves the unanswered calls in flight. */
    static final long ROUND_WAIT_MILLIS = 20;

    /**
     * A partition's delay set being watched; {@code users} subscriptions want it (guarded by the map). The next look
     * only ever moves earlier through {@link #lookBy}, so a hint is never lost to another thread's update.
     */
    private static final class Watched {
        final String topic;
        final String name;
        final Partitions partitions;
        final int partition;
        int users;
        final AtomicLong nextLookNanos = new AtomicLong(System.nanoTime()); // look at once: entries may be due
        final RetryBackoff backoff = new RetryBackoff();
        /** The call in flight, or null; its deadline (the mover's thread only). */
        CompletableFuture<Scripts.Moved> reply;
        long replyDeadlineNanos;

        Watched(Partitions partitions, int partition) {
            this.topic = partitions.topic();
            this.name = partitions.name(partition);
            this.partitions = partitions;
            this.partition = partition;
        }

        /** Looks no later than {@code at}; true when that is sooner than planned. */
        boolean lookBy(long at) {
            long before = nextLookNanos.getAndAccumulate(at, (planned, wanted) -> wanted - planned < 0 ? wanted
                    : planned);
            return at - before < 0;
        }
    }

    private final Scripts scripts;
    private final SafeListener listener;
    private final long pollNanos;
    private final long timeoutMillis;
    private final Map<String, Watched> watched = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean closed;

    public DelayMover(Scripts scripts, SafeListener listener, long pollMillis, long timeoutMillis) {
        this.scripts = scripts;
        this.listener = listener;
        this.pollNanos = TimeUnit.MILLISECONDS.toNanos(pollMillis);
        this.timeoutMillis = timeoutMillis;
        this.thread = new Thread(this::run, "runbus-delay-mover");
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    /** Starts moving the due entries of these partitions (until as many {@link #unwatch} calls). */
    public void watch(Partitions partitions) {
        for (int p = 0; p < partitions.count(); p++) {
            int partition = p;
            watched.compute(partitions.name(p), (n, w) -> {
                Watched v = w != null ? w : new Watched(partitions, partition);
                v.users++;
                return v;
            });
        }
        LockSupport.unpark(thread); // look at the new ones now: entries may be due already
    }

    public void unwatch(Partitions partitions) {
        for (String name : partitions.names()) {
            watched.computeIfPresent(name, (n, w) -> --w.users == 0 ? null : w);
        }
    }

    /** An entry of partition {@code name} is due in {@code dueInMillis}: look then, if that is sooner. */
    public void hint(String name, long dueInMillis) {
        Watched w = watched.get(name);
        if (w == null) {
            return; // not subscribed here: a bus that subscribes to the topic moves it
        }
        if (w.lookBy(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, dueInMillis)))) {
            LockSupport.unpark(thread);
        }
    }

    private void run() {
        while (!closed) {
            try {
                long now = System.nanoTime();
                List<Watched> due = new ArrayList<>();
                long earliest = now + pollNanos;
                boolean answered = false;
                for (Watched w : watched.values()) {
                    long next = w.reply != null ? w.replyDeadlineNanos : w.nextLookNanos.get();
                    if (w.reply != null && (w.reply.isDone() || next - now <= 0)) {
                        answered = true; // a call left in flight answered or timed out: handled below
                    } else if (w.reply != null) {
                        earliest = next - earliest < 0 ? next : earliest;
                    } else if (next - now <= 0) {
                        due.add(w);
                    } else if (next - earliest < 0) {
                        earliest = next;
                    }
                }
                if (due.isEmpty() && !answered) {
                    LockSupport.parkNanos(this, earliest - now);
                    continue;
                }
                moveDue(due);
            } catch (Throwable unexpected) {
                // moveDue reports per partition; this is a bug of ours, and the loop must go on regardless
                log.error("delay mover: unexpected failure; it goes on", unexpected);
                listener.onLoopError("delay mover", unexpected);
                LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(RetryBackoff.MAX_MILLIS));
            }
        }
    }

    /**
     * One call per due partition, all sent before any answer is awaited; then the answers of every call in flight,
     * awaited {@value #ROUND_WAIT_MILLIS} ms at most.
     */
    private void moveDue(List<Watched> due) {
        for (int i = 0; i < due.size(); i++) {
            Watched w = due.get(i);
            // At the latest a poll from now; a hint while the call runs (an entry scheduled after the script looked)
            // can only make it sooner, and so can the answer.
            w.nextLookNanos.set(System.nanoTime() + pollNanos);
            try {
                CrashPoints.reach(CrashPoints.Point.BEFORE_MOVE);
                w.reply = scripts.moveDue(w.topic, w.name, BATCH);
                w.reply.whenComplete((m, e) -> LockSupport.unpark(thread)); // a late answer is handled at once
            } catch (RuntimeException e) {
                w.reply = CompletableFuture.failedFuture(e);
            }
            w.replyDeadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        }
        long roundEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ROUND_WAIT_MILLIS);
        for (Watched w : watched.values()) {
            if (w.reply == null) {
                continue;
            }
            long lookedAt = System.nanoTime();
            try {
                Scripts.Moved m;
                try {
                    m = w.reply.get(Math.max(0, Math.min(roundEnd, w.replyDeadlineNanos) - lookedAt),
                            TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    if (lookedAt - w.replyDeadlineNanos < 0) {
                        continue; // left in flight: the other partitions go on
                    }
                    w.reply.cancel(true);
                    throw new ExecutionException(new RunbusException("moving due entries of " + w.name
                            + " got no answer within " + timeoutMillis + " ms"));
                } finally {
                    if (w.reply.isDone()) {
                        w.reply = null;
                    }
                }
                CrashPoints.reach(CrashPoints.Point.AFTER_MOVE);
                if (m.setAside() > 0) {
                    reportSetAside(w, m);
                }
                w.backoff.reset();
                long wait = m.moved() + m.setAside() >= BATCH ? 0
                        : m.nextDueInMillis() < 0 ? pollNanos
                        : Math.min(pollNanos, TimeUnit.MILLISECONDS.toNanos(m.nextDueInMillis()));
                w.lookBy(lookedAt + wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return; // only close interrupts; the loop ends
            } catch (Exception e) {
                listener.onLoopError("delay mover " + w.name, e.getCause() != null ? e.getCause() : e);
                w.nextLookNanos.set(lookedAt + TimeUnit.MILLISECONDS.toNanos(w.backoff.next()));
            }
        }
    }

    /** Entries the script set aside as dead letters: each reported as any dead letter is, and the loop's error. */
    private void reportSetAside(Watched w, Scripts.Moved m) {
        listener.onLoopError("delay mover " + w.name, new RunbusException(m.setAside() + " scheduled entries of "
                + w.name + " could not be appended to the stream (not written as runbus writes them); they were set"
                + " aside as dead letters of topic " + w.topic));
        for (Scripts.SetAside a : m.deadLetters()) {
            listener.onDeadLetter(DeadLetterFields.decode(w.partitions, w.partition, a.deadLetterId(), a.fields(),
                    null));
        }
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
        try {
            thread.join(timeoutMillis + 1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
