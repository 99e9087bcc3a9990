package dev.runbus.internal;

import io.lettuce.core.Consumer;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.UnblockType;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
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
 * Reads new entries of the partitions this consumer owns and has caught up on, with one blocking XREADGROUP
 * over all of them, into each partition's queue. A partition whose queue holds {@code batchSize} entries is
 * left out until its runners worked it down. When a partition becomes readable while a read blocks without
 * it, {@link #wake} ends the read at once (CLIENT UNBLOCK), so a partition never waits for a block time.
 *
 * <p>Entries read for a partition that was lost meanwhile stay pending under this consumer: its next owner
 * claims them, in order, when it catches up.
 */
final class OrderedReadLoop implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(OrderedReadLoop.class);
    private static final long RETRY_PAUSE_MILLIS = 1000;

    private final SubscriptionContext ctx;
    private final StatefulRedisConnection<String, byte[]> connection;
    private final RedisCommands<String, byte[]> shared;
    private final PartitionOwnership ownership;
    private final OrderedRunners runners;
    private final ReadLoop.GroupCreator groups;
    private final SafeListener listener;
    private final Thread thread;
    private final Object idle = new Object();
    private volatile boolean closed;
    private volatile long clientId = -1;
    /** The partitions of the read in progress; null when none blocks. */
    private volatile Set<Integer> reading;

    OrderedReadLoop(SubscriptionContext ctx, StatefulRedisConnection<String, byte[]> connection,
                    RedisCommands<String, byte[]> shared, PartitionOwnership ownership, OrderedRunners runners,
                    ReadLoop.GroupCreator groups, SafeListener listener) {
        this.ctx = ctx;
        this.connection = connection;
        this.shared = shared;
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
            Map<String, OwnedPartition> byStream = new HashMap<>();
            for (OwnedPartition p : ownership.owned()) {
                if (p.wantsNew(batch)) {
                    byStream.put(ctx.streamKey(p.number), p);
                }
            }
            if (byStream.isEmpty()) {
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
                read(byStream, batch);
            } catch (Throwable e) {
                reading = null;
                if (closed) {
                    return;
                }
                onReadError(byStream.values(), e);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private void read(Map<String, OwnedPartition> byStream, int batch) {
        RedisCommands<String, byte[]> redis = connection.sync();
        if (clientId < 0) {
            clientId = redis.clientId();
        }
        List<XReadArgs.StreamOffset<String>> offsets = new ArrayList<>();
        byStream.keySet().forEach(k -> offsets.add(XReadArgs.StreamOffset.lastConsumed(k)));
        reading = byStream.values().stream().map(p -> p.number).collect(Collectors.toSet());
        List<StreamMessage<String, byte[]>> read = redis.xreadgroup(Consumer.from(ctx.group(), ctx.consumer()),
                XReadArgs.Builder.count(batch).block(ctx.options().blockTime()),
                offsets.toArray(new XReadArgs.StreamOffset[0]));
        reading = null;
        Map<String, List<Entry>> entries = new HashMap<>();
        for (StreamMessage<String, byte[]> m : read) {
            entries.computeIfAbsent(m.getStream(), k -> new ArrayList<>())
                    .add(new Entry(m.getId(), m.getBody(), 1, ""));
        }
        entries.forEach((stream, list) -> {
            OwnedPartition p = byStream.get(stream);
            p.add(list);
            runners.offer(p);
        });
    }

    private void onReadError(Iterable<OwnedPartition> partitions, Throwable e) {
        clientId = -1; // a reconnect gives the connection a new client id
        if (String.valueOf(e.getMessage()).contains("NOGROUP")) {
            log.warn("group {} is missing on a partition of {}; creating it again", ctx.group(), ctx.topic());
            try {
                partitions.forEach(p -> groups.ensureGroup(p.name, ctx.group()));
                return;
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
        }
        log.warn("reading {} failed; retrying in {} ms", ctx.describe(), RETRY_PAUSE_MILLIS, e);
        listener.onLoopError("ordered read " + ctx.describe(), e);
        synchronized (idle) {
            try {
                idle.wait(RETRY_PAUSE_MILLIS);
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
        long id = clientId;
        if (id >= 0) {
            try {
                shared.clientUnblock(id, UnblockType.TIMEOUT);
            } catch (RuntimeException ignored) {
                // the read ends by its block time instead
            }
        }
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
