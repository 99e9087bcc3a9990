package dev.runbus.internal.consume;

import dev.runbus.internal.redis.Entry;
import dev.runbus.internal.redis.RetryBackoff;
import dev.runbus.internal.redis.Slots;
import dev.runbus.internal.redis.StreamReader;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import io.lettuce.core.Consumer;
import io.lettuce.core.StreamMessage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a consumer's entries in batches: first its own pending entries from an earlier run (XREADGROUP
 * with id 0, then after the last one seen), partition after partition, then new ones (XREADGROUP {@code >}
 * with BLOCK). Each read asks for no more entries than there are free slots. When the own pending entries of
 * every partition are exhausted it says so, and only then does the reclaimer start: otherwise both would
 * deliver the same idle entries.
 *
 * <p>New entries of every partition come from one blocking XREADGROUP naming all the partitions' streams, so
 * a topic's partitions cost a consumer no more round trips than a plain topic: one read, one thread, one
 * connection, however many partitions. On a single Redis that is one command; on Redis Cluster, where the
 * partitions sit in different slots, the {@link StreamReader} sends one read per partition and polls.
 *
 * <p>Blocking reads use a connection of their own, so they never delay the acks and scripts that share the
 * bus's connection; {@link #close()} ends a blocked read at once with CLIENT UNBLOCK.
 *
 * <p>The answer of a read the reader left in flight (a stalled cluster master) is handed on as soon as the loop sees
 * it, at every turn (at least every 100 ms while it waits for room), beyond the room if need be (its entries were
 * delivered to this consumer already): those of its entries still this consumer's once renewed ({@link LateAnswers}).
 */
public final class ReadLoop implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReadLoop.class);
    /** Beyond the longest a read can take, for the thread to get from the read's end to its own end. */
    private static final long CLOSE_MARGIN_MILLIS = 1000;

    private final SubscriptionContext ctx;
    private final StreamReader reader;
    private final Scripts scripts;
    private final GroupCreator groups;
    private final Slots slots;
    private final Dispatcher dispatcher;
    private final SafeListener listener;
    private final Runnable ownPendingDone;
    private final long commandTimeoutMillis;
    private final LateAnswers lateAnswers;
    private final Thread thread;
    /** The partition of each stream key, for the entries of a read over all of them. */
    private final Map<String, Integer> partitionOfStream = new HashMap<>();
    /** Where the next read's streams start when there is room for fewer entries than partitions. */
    private int rotation;
    private final RetryBackoff backoff = new RetryBackoff();
    private volatile boolean closed;

    ReadLoop(SubscriptionContext ctx, StreamReader reader, Scripts scripts, GroupCreator groups, Slots slots,
             Dispatcher dispatcher, SafeListener listener, Runnable ownPendingDone, long commandTimeoutMillis) {
        this.ctx = ctx;
        this.reader = reader;
        this.scripts = scripts;
        this.groups = groups;
        this.slots = slots;
        this.dispatcher = dispatcher;
        this.listener = listener;
        this.ownPendingDone = ownPendingDone;
        this.commandTimeoutMillis = commandTimeoutMillis;
        this.lateAnswers = new LateAnswers(ctx, scripts, listener);
        this.thread = new Thread(this::run, "runbus-read-" + ctx.describe());
        this.thread.setDaemon(true);
        for (int p = 0; p < ctx.streamKeys().size(); p++) {
            partitionOfStream.put(ctx.streamKey(p), p);
        }
    }

    ReadLoop start() {
        thread.start();
        return this;
    }

    /** Whether the loop's thread is alive: from its start until the close stopped it. */
    boolean isAlive() {
        return thread.isAlive();
    }

    private void run() {
        // Own pending entries are re-read one partition after the other; ownPartition -1 means all are done.
        int ownPartition = 0;
        String ownPendingAfter = "0";
        int batchSize = ctx.options().batchSize();
        while (!closed) {
            handOnLateAnswers();
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
                if (ownPartition >= 0) {
                    Scripts.ReadResult r = scripts.readOwnPending(ctx.partitions(), ownPartition, ctx.group(),
                            ctx.consumer(), ownPendingAfter, room);
                    if (!r.trimmed().isEmpty()) {
                        listener.onTrimmedWhilePending(ctx.topic(), ctx.group(),
                                ctx.qualify(ownPartition, r.trimmed()));
                    }
                    entries = r.entries();
                    ownPendingAfter = r.lastId();
                    if (ownPendingAfter == null) {
                        ownPendingAfter = "0";
                        if (++ownPartition == ctx.partitions().count()) {
                            ownPartition = -1;
                            ownPendingDone.run();
                        }
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
            backoff.reset();
            slots.release(room - entries.size());
            dispatcher.accept(entries, slots);
        }
    }

    /**
     * Hands on the entries of reads answered after the reader stopped waiting for them, so that they are held and kept
     * alive from now on, each taking a slot whether free or not.
     */
    private void handOnLateAnswers() {
        for (StreamReader.LateAnswer answer : reader.takeLateAnswers()) {
            if (answer.entries().isEmpty()) {
                continue;
            }
            // Not as fresh entries: a first start written without the script is judged by how long ago the entry was
            // held (StartRecorder), and these were delivered earlier than that.
            List<Entry> entries = entries(answer.entries(), false);
            List<Entry> ours = lateAnswers.renew("read", entries.get(0).partition(), entries);
            slots.overdraw(ours.size());
            dispatcher.accept(ours, slots);
        }
    }

    private List<Entry> readNew(int room) {
        // The reader returns at most `room` entries (late answers of stalled reads come apart). One command over n
        // streams bounds each by room / n, so it needs room for one per stream: with less room than streams, only
        // `room` of them are read, starting one further every time so that none is left behind. A reader that reads
        // in turn takes them all.
        int n = ctx.streamKeys().size();
        int streams = reader.readsInTurn() ? n : Math.min(n, room);
        List<String> keys = new ArrayList<>(streams);
        for (int i = 0; i < streams; i++) {
            keys.add(ctx.streamKey((rotation + i) % n));
        }
        rotation = (rotation + streams) % n;
        List<StreamMessage<String, byte[]>> read = reader.readGroup(Consumer.from(ctx.group(), ctx.consumer()),
                room, ctx.options().blockTime(), keys);
        return entries(read, true);
    }

    /**
     * Entries read as new ({@code >}): their first delivery. {@code fresh}: whether their first start may be written
     * without the script ({@link Entry#fresh}).
     */
    private List<Entry> entries(List<StreamMessage<String, byte[]>> read, boolean fresh) {
        List<Entry> entries = new ArrayList<>(read.size());
        for (StreamMessage<String, byte[]> m : read) {
            entries.add(new Entry(partitionOfStream.get(m.getStream()), m.getId(), m.getBody(), 1, "", fresh));
        }
        return entries;
    }

    private void onReadError(Throwable e) {
        reader.reset(); // a reconnect gives the connection a new client id
        String message = String.valueOf(e.getMessage());
        if (message.contains("NOGROUP")) {
            // A stream or its group is gone (deleted, or Redis lost its data): recreate it and read on. The error
            // does not say which of the streams read it was, so the group is ensured on every partition's stream
            // (an existing group is left as it is).
            log.warn("group {} of a stream of {} is missing; creating it again", ctx.group(), ctx.topic());
            try {
                for (String name : ctx.partitions().names()) {
                    groups.ensureGroup(name, ctx.group());
                }
                return;
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
        }
        long pause = backoff.next();
        log.warn("reading {} failed; retrying in {} ms", ctx.describe(), pause, e);
        listener.onLoopError("read " + ctx.describe(), e);
        try {
            Thread.sleep(pause);
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
                reader.unblock();
                thread.join(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Creates a consumer group on partition {@code name}'s stream when it is missing. */
    public interface GroupCreator {
        void ensureGroup(String name, String group);
    }
}
