package dev.runbus.internal.ordered;

import dev.runbus.internal.consume.ReadLoop;
import dev.runbus.internal.consume.SubscriptionContext;
import dev.runbus.internal.redis.PartitionCalls;
import dev.runbus.internal.redis.RetryBackoff;
import dev.runbus.internal.redis.StreamReader;
import dev.runbus.internal.telemetry.SafeListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads new entries of the partitions this consumer owns and has caught up on into each partition's queue:
 * through the fenced read script (ordered_read.lua explains why never with a plain XREADGROUP), and when none
 * has anything new, waits for new entries with one XREAD BLOCK over all of them (on a cluster, polled:
 * {@link StreamReader}). A partition whose queue holds
 * {@code batchSize} entries is left out until its runners worked it down. When a partition becomes readable
 * while the wait blocks without it, {@link #wake} ends the wait at once (CLIENT UNBLOCK).
 *
 * <p>Entries read for a partition that was lost meanwhile stay pending under this consumer: its next owner
 * claims them, in order, when it catches up.
 */
final class OrderedReadLoop implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(OrderedReadLoop.class);
    /** How long a round waits for the reads it sent before going on with those answered. */
    static final long READ_WAIT_MILLIS = 200;

    /** A partition to read new entries for, in the generation they are read for. */
    private record Readable(OwnedPartition partition, OwnedPartition.ReadFrom from) {
    }

    private final SubscriptionContext ctx;
    private final StreamReader reader;
    private final OrderedScripts scripts;
    private final PartitionOwnership ownership;
    private final OrderedRunners runners;
    private final ReadLoop.GroupCreator groups;
    private final SafeListener listener;
    private final Thread thread;
    private final Object idle = new Object();
    private final RetryBackoff backoff = new RetryBackoff();
    /** The reads in flight, one per partition at most, and what each was sent for: the read loop's thread only. */
    private final PartitionCalls<List<Object>> calls;
    private final Map<Integer, Readable> sentFor = new HashMap<>();
    /** Partitions whose read failed, by when they are read again (System.nanoTime), with their backoffs. */
    private final Map<Integer, Long> retryAfter = new HashMap<>();
    private final Map<Integer, RetryBackoff> backoffs = new HashMap<>();
    private volatile boolean closed;
    /** The partitions of the read in progress; null when none blocks. */
    private volatile Set<Integer> reading;

    OrderedReadLoop(SubscriptionContext ctx, StreamReader reader, OrderedScripts scripts, PartitionOwnership ownership,
                    OrderedRunners runners,
                    ReadLoop.GroupCreator groups, SafeListener listener, long commandTimeoutMillis) {
        this.ctx = ctx;
        this.calls = new PartitionCalls<>("ordered read", commandTimeoutMillis);
        this.reader = reader;
        this.scripts = scripts;
        this.ownership = ownership;
        this.runners = runners;
        this.groups = groups;
        this.listener = listener;
        this.thread = new Thread(this::run, "runbus-ordered-read-" + ctx.describe());
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Whether the loop's thread is alive: from its start until the close stopped it. */
    boolean isAlive() {
        return thread.isAlive();
    }

    private void run() {
        int batch = ctx.options().batchSize();
        while (!closed) {
            List<Readable> readable = new ArrayList<>();
            for (OwnedPartition p : ownership.owned()) {
                OwnedPartition.ReadFrom from = p.readFrom(batch);
                if (from != null) {
                    readable.add(new Readable(p, from));
                }
            }
            if (readable.isEmpty() && sentFor.isEmpty()) {
                synchronized (idle) {
                    try {
                        idle.wait(100);
                    } catch (InterruptedException e) {
                        Thread.interrupted(); // only close ends this loop
                    }
                }
                continue;
            }
            try {
                read(readable, batch);
                backoff.reset();
            } catch (Throwable e) {
                reading = null;
                if (closed) {
                    return;
                }
                onWaitError(e);
            }
        }
    }

    /**
     * Reads each partition through the fenced script; when none had anything new, waits with XREAD BLOCK from
     * their last ids (which takes nothing) until one has. The reads are sent together and awaited
     * {@value #READ_WAIT_MILLIS} ms: a read its master has not answered by then stays in flight, its partition is
     * skipped until the answer comes (handled then, for the generation it was sent for) or its deadline passes, and
     * the others go on (docs/architecture.md, rule 14: one stalled master holds back only its own partitions). Each
     * round waits for the reads it sent, not again for one an earlier round left in flight, which would cost every
     * round that long and bound the others' reads to a batch per {@value #READ_WAIT_MILLIS} ms.
     */
    private void read(List<Readable> readable, int batch) {
        long now = System.nanoTime();
        for (Readable each : readable) {
            OwnedPartition p = each.partition();
            Long notBefore = retryAfter.get(p.number);
            if (calls.inFlight(p.number) || notBefore != null && now - notBefore < 0) {
                continue;
            }
            sentFor.put(p.number, each);
            calls.send(p.number, () -> scripts.readAsync(p.name, p.holder, batch, each.from().knownId()));
        }
        Map<String, String> lastIds = new HashMap<>();
        boolean[] any = {false};
        calls.awaitRound(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READ_WAIT_MILLIS),
                new PartitionCalls.Outcome<>() {
                    @Override
                    public void answered(int partition, List<Object> reply) {
                        Readable each = sentFor.remove(partition);
                        retryAfter.remove(partition);
                        backoffs.remove(partition);
                        OwnedPartition p = each.partition();
                        OrderedScripts.Read r;
                        try {
                            r = scripts.readReply(partition, p.name, reply);
                        } catch (OrderedScripts.Fenced fenced) {
                            ownership.lost(p, fenced.getMessage());
                            return;
                        }
                        if (r.entries().isEmpty()) {
                            lastIds.put(ctx.streamKey(partition), r.lastId());
                        } else {
                            any[0] = true;
                            p.add(each.from().generation(), r.entries());
                            runners.offer(p);
                        }
                    }

                    @Override
                    public void failed(int partition, Throwable error) {
                        onReadError(sentFor.remove(partition), error);
                    }
                });
        if (any[0] || lastIds.isEmpty()) {
            return;
        }
        reading = readable.stream().map(r -> r.partition().number).collect(Collectors.toSet());
        try {
            // With a read still in flight, come back for it soon rather than after a whole block time.
            reader.awaitNew(lastIds, sentFor.isEmpty() ? ctx.options().blockTime()
                    : Duration.ofMillis(Math.min(ctx.options().blockTime().toMillis(), READ_WAIT_MILLIS)));
        } finally {
            reading = null;
        }
    }

    /**
     * A partition's read failed (or got no answer by its deadline: it may still run, and what it read comes back
     * first with the next read, ordered_read.lua): that partition alone waits, backing off while it keeps failing;
     * a missing group is created again first.
     */
    private void onReadError(Readable failed, Throwable e) {
        if (failed == null || closed) {
            return;
        }
        int number = failed.partition().number;
        if (String.valueOf(e.getMessage()).contains("NOGROUP")) {
            log.warn("group {} is missing on partition {} of {}; creating it again", ctx.group(), number, ctx.topic());
            try {
                groups.ensureGroup(failed.partition().name, ctx.group());
                return;
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
        }
        long pause = backoffs.computeIfAbsent(number, n -> new RetryBackoff()).next();
        retryAfter.put(number, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pause));
        log.warn("reading partition {} of {} failed; retrying it in {} ms", number, ctx.describe(), pause, e);
        listener.onLoopError("ordered read " + ctx.describe(), e);
    }

    /** The wait for new entries failed: every partition waits, backing off while it keeps failing. */
    private void onWaitError(Throwable e) {
        reader.reset(); // a reconnect gives the connection a new client id
        long pause = backoff.next();
        log.warn("waiting for new entries of {} failed; retrying in {} ms", ctx.describe(), pause, e);
        listener.onLoopError("ordered read " + ctx.describe(), e);
        synchronized (idle) {
            try {
                idle.wait(pause);
            } catch (InterruptedException interrupted) {
                Thread.interrupted();
            }
        }
    }

    /** Partition {@code number} wants new entries: end a read that blocks without it. */
    void wake(int number) {
        synchronized (idle) {
            idle.notifyAll();
        }
        Set<Integer> now = reading;
        if (now != null && !now.contains(number)) {
            unblock();
        }
    }

    private void unblock() {
        reader.unblock();
    }

    /** Stops reading; a blocked read is ended at once. Waits for the thread up to the read's longest time. */
    @Override
    public void close() {
        closed = true;
        long deadline = System.nanoTime() + ctx.options().blockTime().toNanos() + TimeUnit.SECONDS.toNanos(2);
        try {
            while (thread.isAlive() && System.nanoTime() < deadline) {
                unblock();
                synchronized (idle) {
                    idle.notifyAll();
                }
                thread.join(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
