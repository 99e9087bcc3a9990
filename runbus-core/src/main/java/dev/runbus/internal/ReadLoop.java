package dev.runbus.internal;

import io.lettuce.core.Consumer;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.UnblockType;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a consumer's entries in batches: first its own pending entries from an earlier run (XREADGROUP
 * with id 0, then after the last one seen), then new ones (XREADGROUP {@code >} with BLOCK). Each read asks
 * for no more entries than there are free slots. When the own pending entries are exhausted it says so,
 * and only then does the reclaimer start: otherwise both would deliver the same idle entries.
 *
 * <p>Blocking reads use a connection of their own, so they never delay the acks and scripts that share the
 * bus's connection; {@link #close()} ends a blocked read at once with CLIENT UNBLOCK.
 */
final class ReadLoop implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReadLoop.class);
    private static final long RETRY_PAUSE_MILLIS = 1000;
    /** Beyond the longest a read can take, for the thread to get from the read's end to its own end. */
    private static final long CLOSE_MARGIN_MILLIS = 1000;

    private final SubscriptionContext ctx;
    private final StatefulRedisConnection<String, byte[]> connection;
    private final RedisCommands<String, byte[]> shared;
    private final Scripts scripts;
    private final GroupCreator groups;
    private final Slots slots;
    private final Dispatcher dispatcher;
    private final SafeListener listener;
    private final Runnable ownPendingDone;
    private final long commandTimeoutMillis;
    private final Thread thread;
    private volatile boolean closed;
    private volatile long clientId = -1;

    ReadLoop(SubscriptionContext ctx, StatefulRedisConnection<String, byte[]> connection,
             RedisCommands<String, byte[]> shared, Scripts scripts, GroupCreator groups, Slots slots,
             Dispatcher dispatcher, SafeListener listener, Runnable ownPendingDone, long commandTimeoutMillis) {
        this.ctx = ctx;
        this.connection = connection;
        this.shared = shared;
        this.scripts = scripts;
        this.groups = groups;
        this.slots = slots;
        this.dispatcher = dispatcher;
        this.listener = listener;
        this.ownPendingDone = ownPendingDone;
        this.commandTimeoutMillis = commandTimeoutMillis;
        this.thread = new Thread(this::run, "runbus-read-" + ctx.describe());
        this.thread.setDaemon(true);
    }

    ReadLoop start() {
        thread.start();
        return this;
    }

    private void run() {
        String ownPendingAfter = "0";
        int batchSize = ctx.options().batchSize();
        while (!closed) {
            int room;
            try {
                room = slots.takeUpTo(batchSize, 100);
            } catch (InterruptedException e) {
                return;
            }
            if (room == 0) {
                continue;
            }
            List<Entry> entries;
            try {
                if (ownPendingAfter != null) {
                    Scripts.ReadResult r = scripts.readOwnPending(ctx.topic(), ctx.group(), ctx.consumer(),
                            ownPendingAfter, room);
                    if (!r.trimmed().isEmpty()) {
                        listener.onTrimmedWhilePending(ctx.topic(), ctx.group(), r.trimmed());
                    }
                    entries = r.entries();
                    ownPendingAfter = r.lastId();
                    if (ownPendingAfter == null) {
                        ownPendingDone.run();
                    }
                } else {
                    entries = readNew(room);
                }
            } catch (Throwable e) {
                slots.release(room);
                if (closed) {
                    return;
                }
                onReadError(e);
                continue;
            }
            slots.release(room - entries.size());
            dispatcher.accept(entries, slots);
        }
    }

    @SuppressWarnings("unchecked") // a one-element varargs array of StreamOffset<String>
    private List<Entry> readNew(int count) {
        RedisCommands<String, byte[]> redis = connection.sync();
        if (clientId < 0) {
            clientId = redis.clientId();
        }
        List<StreamMessage<String, byte[]>> read = redis.xreadgroup(Consumer.from(ctx.group(), ctx.consumer()),
                XReadArgs.Builder.count(count).block(ctx.options().blockTime()),
                XReadArgs.StreamOffset.lastConsumed(ctx.streamKey()));
        List<Entry> entries = new ArrayList<>(read.size());
        for (StreamMessage<String, byte[]> m : read) {
            entries.add(new Entry(m.getId(), m.getBody(), 1, ""));
        }
        return entries;
    }

    private void onReadError(Throwable e) {
        clientId = -1; // a reconnect gives the connection a new client id
        String message = String.valueOf(e.getMessage());
        if (message.contains("NOGROUP")) {
            // The stream or group is gone (deleted, or Redis lost its data): recreate it and read on.
            log.warn("group {} of {} is missing; creating it again", ctx.group(), ctx.streamKey());
            try {
                groups.ensureGroup(ctx.topic(), ctx.group());
                return;
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
        }
        log.warn("reading {} failed; retrying in {} ms", ctx.describe(), RETRY_PAUSE_MILLIS, e);
        listener.onLoopError("read " + ctx.describe(), e);
        try {
            Thread.sleep(RETRY_PAUSE_MILLIS);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops reading; a blocked XREADGROUP is unblocked at once. Entries already read are dispatched. Waits for
     * the read in progress as long as it can take (the block time plus the command timeout, which is the read
     * connection's timeout): a read given up on could still return entries after the dispatcher's drain, and
     * those are then left pending, unheld (see {@link Dispatcher#accept}).
     */
    @Override
    public void close() {
        closed = true;
        long deadline = System.nanoTime() + ctx.options().blockTime().toNanos()
                + TimeUnit.MILLISECONDS.toNanos(commandTimeoutMillis + CLOSE_MARGIN_MILLIS);
        try {
            while (thread.isAlive() && System.nanoTime() < deadline) {
                long id = clientId;
                if (id >= 0) {
                    try {
                        shared.clientUnblock(id, UnblockType.TIMEOUT);
                    } catch (RuntimeException ignored) {
                        // the blocked read ends by its own timeout instead
                    }
                }
                thread.join(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Creates a consumer group when it is missing. */
    interface GroupCreator {
        void ensureGroup(String topic, String group);
    }
}
