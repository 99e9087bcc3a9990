package dev.runbus.internal;

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
    private volatile boolean closed;
    /** The partitions of the read in progress; null when none blocks. */
    private volatile Set<Integer> reading;

    OrderedReadLoop(SubscriptionContext ctx, StreamReader reader, OrderedScripts scripts, PartitionOwnership ownership,
                    OrderedRunners runners,
                    ReadLoop.GroupCreator groups, SafeListener listener) {
        this.ctx = ctx;
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
            if (readable.isEmpty()) {
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
                onReadError(readable, e);
            }
        }
    }

    /**
     * Reads each partition through the fenced script; when none had anything new, waits with XREAD BLOCK from
     * their last ids (which takes nothing) until one has.
     */
    @SuppressWarnings("unchecked")
    private void read(List<Readable> readable, int batch) {
        Map<String, String> lastIds = new HashMap<>();
        boolean any = false;
        for (Readable each : readable) {
            OwnedPartition p = each.partition();
            OrderedScripts.Read r;
            try {
                r = scripts.read(p.number, p.name, p.holder, batch, each.from().knownId());
            } catch (OrderedScripts.Fenced fenced) {
                ownership.lost(p, fenced.getMessage());
                continue;
            }
            if (r.entries().isEmpty()) {
                lastIds.put(ctx.streamKey(p.number), r.lastId());
            } else {
                any = true;
                p.add(each.from().generation(), r.entries());
                runners.offer(p);
            }
        }
        if (any || lastIds.isEmpty()) {
            return;
        }
        reading = readable.stream().map(r -> r.partition().number).collect(Collectors.toSet());
        try {
            reader.awaitNew(lastIds, ctx.options().blockTime());
        } finally {
            reading = null;
        }
    }

    private void onReadError(List<Readable> partitions, Throwable e) {
        reader.reset(); // a reconnect gives the connection a new client id
        if (String.valueOf(e.getMessage()).contains("NOGROUP")) {
            log.warn("group {} is missing on a partition of {}; creating it again", ctx.group(), ctx.topic());
            try {
                partitions.forEach(r -> groups.ensureGroup(r.partition().name, ctx.group()));
                return;
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
        }
        long pause = backoff.next();
        log.warn("reading {} failed; retrying in {} ms", ctx.describe(), pause, e);
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
