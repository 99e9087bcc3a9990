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
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a consumer's entries in batches: first, partition by partition, its own pending entries from an earlier run
 * (XREADGROUP with id 0, then after the last one seen), then new ones (XREADGROUP {@code >} with BLOCK). Each
 * partition starts on its own ({@link PartitionStartup}): its new entries are read once its own pending entries were
 * re-read, and a partition whose master does not answer waits alone while the others are served (docs/architecture.md,
 * rule 14). The reclaimer takes a partition's entries only once they were re-read too: otherwise both would deliver
 * the same idle entries. Each read asks for no more entries than there are free slots.
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
    private final PartitionStartup startup;
    private final Slots slots;
    private final Dispatcher dispatcher;
    private final SafeListener listener;
    private final long commandTimeoutMillis;
    private final LateAnswers lateAnswers;
    private final Thread thread;
    /** The partition of each stream key, for the entries of a read over all of them. */
    private final Map<String, Integer> partitionOfStream = new HashMap<>();
    /** Where the next read's streams start when there is room for fewer entries than partitions. */
    private int rotation;
    private final RetryBackoff backoff = new RetryBackoff();
    private volatile boolean closed;

    /** {@code groupsCreated}: the partitions whose group the subscribe found or created. */
    ReadLoop(SubscriptionContext ctx, StreamReader reader, Scripts scripts, GroupCreator groups, Slots slots,
             Dispatcher dispatcher, SafeListener listener, long commandTimeoutMillis, Set<Integer> groupsCreated) {
        this.ctx = ctx;
        this.reader = reader;
        this.startup = new PartitionStartup(ctx, scripts, groups, slots, dispatcher, listener, commandTimeoutMillis,
                groupsCreated);
        this.slots = slots;
        this.dispatcher = dispatcher;
        this.listener = listener;
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

    /** Whether partition {@code p}'s own pending entries were re-read: the reclaimer may take its entries from then on. */
    boolean ownPendingReread(int p) {
        return startup.reread(p);
    }

    private void run() {
        int batchSize = ctx.options().batchSize();
        while (!closed) {
            handOnLateAnswers();
            List<Integer> readable = startup.readable();
            startup.step(readable.isEmpty());
            if (readable.isEmpty() || closed) {
                continue;
            }
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
            long sentAt = System.nanoTime();
            try {
                entries = readNew(room, readable);
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
            dispatcher.accept(entries, slots, sentAt);
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

    private List<Entry> readNew(int room, List<Integer> readable) {
        // The reader returns at most `room` entries (late answers of stalled reads come apart). One command over n
        // streams bounds each by room / n, so it needs room for one per stream: with less room than streams, only
        // `room` of them are read, starting one further every time so that none is left behind. A reader that reads
        // in turn takes them all.
        int n = readable.size();
        int streams = reader.readsInTurn() ? n : Math.min(n, room);
        List<String> keys = new ArrayList<>(streams);
        for (int i = 0; i < streams; i++) {
            keys.add(ctx.streamKey(readable.get((rotation + i) % n)));
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
        if (String.valueOf(e.getMessage()).contains("NOGROUP")) {
            // A stream or its group is gone (deleted, or Redis lost its data): it is created again, each partition on
            // its own, and read on. The error does not say which of the streams read it was, so every partition's
            // group is ensured again (an existing group is left as it is).
            log.warn("group {} of a stream of {} is missing; creating it again", ctx.group(), ctx.topic());
            startup.groupsMissing();
            return;
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

    /** Creates a consumer group on a partition's stream when it is missing. */
    public interface GroupCreator {
        /**
         * Creates {@code group} on partition {@code name}'s stream (and the stream), at its start, without waiting; the
         * future completes when the group exists, created now or found.
         */
        CompletableFuture<Void> ensureGroupAsync(String name, String group);

        /** Like {@link #ensureGroupAsync}, waiting for the answer (up to the command timeout). */
        default void ensureGroup(String name, String group) {
            try {
                ensureGroupAsync(name, group).join();
            } catch (CompletionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : e;
            }
        }
    }
}
