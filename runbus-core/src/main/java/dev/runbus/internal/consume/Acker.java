package dev.runbus.internal.consume;

import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Acknowledges finished entries in batches, with one XACK on the wire at a time (group commit): the thread
 * that finishes a handler sends an XACK at once if none is in flight; otherwise its id waits, and when the
 * XACK in flight is answered, everything that finished meanwhile leaves in the next one. Under load that is
 * hundreds of ids per round trip; when idle, an ack leaves at once, without a hand-off to another thread.
 *
 * <p>A failed XACK is reported and dropped: the entries stay pending and are delivered again, which
 * at-least-once delivery allows. Acks that arrive after {@link #close()} are dropped the same way.
 *
 * <p>An XACK names one stream, so each partition of the topic has its own queue and its own XACK in flight:
 * the partitions' acks are committed side by side, each as a group, and a slow partition never holds up
 * another's acks.
 *
 * <p>An ack also removes the entries' start records (the handler starts the dispatcher records for them, which
 * the reclaimer counts as their deliveries): one script, ack.lua, does XACK and HDEL. A script rather than an
 * HDEL pipelined after the XACK because the two must not come apart: a connection lost between them would leave
 * a field for an entry that is no longer pending, which nothing would ever remove; and it keeps one command and
 * one round trip per batch, where a pipelined HDEL would add a command per batch. Ack-before-work mode
 * ({@link #ackNow}) records no starts, since it never delivers an entry twice, but acks with the same script: an
 * entry it takes over may carry a field of an earlier delivery to a consumer that acks after work.
 *
 * <p>An entry's ack never reaches Redis before its start record ({@link #ack(int, String, CompletableFuture)}): the
 * ack.lua that removes the entry's field would run first, and the record would then leave a field for an entry no
 * longer pending. The record is sent from the handler's thread; an ack leaves either from a handler's thread too,
 * when no XACK of its lane is in flight, or from the client's I/O thread, in the reply's callback of the XACK in
 * flight, and the I/O thread writes ahead of what other threads queued there. So an ack whose record is not answered
 * yet leaves at once from its own thread only where commands reach Redis in the order of the calls (one connection;
 * not a cluster, see {@link BusServices#writesInCallOrder}); otherwise it waits until the record is answered (then
 * it has run, a copy re-sent after a reconnect included). The wait holds no thread: the ids wait in their lane, by
 * record, and enter the queue together when it is answered, so that they still leave in one XACK.
 *
 * <p>Whoever acks a handled entry is told when its XACK is answered ({@link #ack(int, String, CompletableFuture,
 * Runnable)}): until then the consumer keeps holding the entry ({@link InFlight#settle}).
 */
final class Acker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Acker.class);
    private static final int MAX_IDS_PER_XACK = 1000;
    private static final Runnable NOBODY = () -> { };

    /** One entry to ack, and whom to tell once its XACK is answered, failed, or dropped at close. */
    private record Ack(String id, Runnable answered) {
    }

    private final Scripts scripts;
    private final RedisClusterAsyncCommands<String, byte[]> redis;
    private final String topic;
    private final String group;
    private final long timeoutMillis;
    private final SafeListener listener;
    /** By partition number. */
    private final List<Lane> lanes;
    /** Whether an ack sent from this thread after its record was sent reaches Redis after it. */
    private final boolean writesInCallOrder;
    private volatile boolean closed;

    /**
     * {@code scripts} and {@code redis} talk over the same connection, as the start records do; {@code writesInCallOrder}
     * as {@link BusServices#writesInCallOrder}.
     */
    Acker(Scripts scripts, RedisClusterAsyncCommands<String, byte[]> redis, SubscriptionContext ctx, long timeoutMillis,
          SafeListener listener, boolean writesInCallOrder) {
        this.writesInCallOrder = writesInCallOrder;
        this.scripts = scripts;
        this.redis = redis;
        this.topic = ctx.topic();
        this.group = ctx.group();
        this.timeoutMillis = timeoutMillis;
        this.listener = listener;
        List<Lane> l = new ArrayList<>(ctx.streamKeys().size());
        for (int p = 0; p < ctx.streamKeys().size(); p++) {
            l.add(new Lane(ctx.streamKeys().get(p), ctx.name(p)));
        }
        this.lanes = List.copyOf(l);
    }

    /** Acknowledges an entry this consumer did not handle (one for another group): no record, nobody to tell. */
    void ack(int partition, String streamId) {
        ack(partition, new Ack(streamId, NOBODY));
    }

    private void ack(int partition, Ack ack) {
        if (closed) {
            log.debug("ack of {} of partition {} after close dropped; it stays pending", ack.id(), partition);
            tell(List.of(ack));
            return;
        }
        Lane lane = lanes.get(partition);
        lane.queue.add(ack);
        lane.sendIfIdle();
    }

    /**
     * Acknowledges an entry whose start was recorded with {@code startRecorded}, the record's reply, sent earlier from
     * this or another handler's thread (never from the client's I/O thread). The ack leaves at once if the record is
     * answered (with a failure too: the client will not send it again), or if it can
     * leave from this thread behind the record: the record was given to the client ({@code recordSent}; a first start
     * may wait in its batch, see {@link FirstStarts}), commands reach Redis in the order of the calls and no XACK of
     * the lane is in flight. Otherwise it waits for the record's reply. {@code answered} runs once the XACK that carried it is
     * answered or failed, or when the ack is dropped at close.
     */
    void ack(int partition, String streamId, CompletableFuture<?> startRecorded, boolean recordSent,
             Runnable answered) {
        Ack ack = new Ack(streamId, answered);
        if (startRecorded.isDone()) {
            ack(partition, ack);
            return;
        }
        Lane lane = lanes.get(partition);
        if (!(recordSent && writesInCallOrder && !closed && lane.sendFromThisThread(ack))) {
            lane.afterRecord(ack, startRecorded);
        }
    }

    /**
     * Acknowledges an entry that ran alone among the bus's handlers, once its start record is answered, and waits for
     * the reply (up to the command timeout): the other handlers start again only after it, so that a process that dies
     * right then does not count one more start of an entry whose handler succeeded. A failure is reported and the
     * entry stays pending, as for any ack.
     */
    void ackAwaited(int partition, String streamId, CompletableFuture<?> startRecorded) {
        if (closed) {
            log.debug("ack of {} of partition {} after close dropped; it stays pending", streamId, partition);
            return;
        }
        Lane lane = lanes.get(partition);
        try {
            startRecorded.handle((r, failure) -> null).get(timeoutMillis, TimeUnit.MILLISECONDS);
            Long acked = scripts.ack(redis, lane.name, group, List.of(streamId)).get(timeoutMillis,
                    TimeUnit.MILLISECONDS);
            listener.meters().acked(topic, group, acked.intValue());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            lane.failed(1, e);
        } catch (Exception e) {
            lane.failed(1, e);
        }
    }

    /** Acknowledges now and waits for the replies (ack-before-work mode); {@code ids} by partition. */
    void ackNow(Map<Integer, List<String>> ids) {
        List<CompletableFuture<Long>> sent = new ArrayList<>(ids.size());
        try {
            ids.forEach((p, list) -> sent.add(scripts.ack(redis, lanes.get(p).name, group, list)));
            for (CompletableFuture<Long> reply : sent) {
                listener.meters().acked(topic, group, reply.get(timeoutMillis, TimeUnit.MILLISECONDS).intValue());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while acknowledging", e);
        } catch (Exception e) {
            throw new IllegalStateException("XACK failed: " + e.getMessage(), e);
        }
    }

    /** Sends every queued ack and waits for the replies (up to the command timeout), then refuses new ones. */
    @Override
    public void close() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (lanes.stream().anyMatch(Lane::busy) && System.nanoTime() < deadline) {
            lanes.forEach(Lane::sendIfIdle);
            LockSupport.parkNanos(200_000);
        }
        closed = true;
        for (Lane lane : lanes) {
            int waiting = lane.waiting.values().stream().mapToInt(List::size).sum();
            if (!lane.queue.isEmpty() || waiting > 0) {
                log.warn("{} acks of {}/{} not sent before close ({} of them waiting for their start records); those"
                        + " entries stay pending", lane.queue.size() + waiting, lane.stream, group, waiting);
            }
            List<Ack> dropped = new ArrayList<>();
            for (Ack ack = lane.queue.poll(); ack != null; ack = lane.queue.poll()) {
                dropped.add(ack);
            }
            tell(dropped);
        }
    }

    /** Tells whoever acked these that their XACK is answered (or that they are dropped); each is told. */
    private static void tell(List<Ack> acks) {
        for (Ack ack : acks) {
            try {
                ack.answered().run();
            } catch (RuntimeException e) {
                log.error("telling that the ack of {} is answered failed", ack.id(), e);
            }
        }
    }

    /** The acks of one partition's stream: its queue and whether its XACK is on the wire. */
    private final class Lane {
        final String stream;
        /** The partition's name, for its start record. */
        final String name;
        final Queue<Ack> queue = new ConcurrentLinkedQueue<>();
        final AtomicBoolean sending = new AtomicBoolean();
        /** Acks whose start record is not answered yet, by that record's reply; a list is changed only in the map. */
        final Map<CompletableFuture<?>, List<Ack>> waiting = new ConcurrentHashMap<>();

        Lane(String stream, String name) {
            this.stream = stream;
            this.name = name;
        }

        boolean busy() {
            return !queue.isEmpty() || sending.get() || !waiting.isEmpty();
        }

        /**
         * Queues {@code id} once {@code record} is answered. Whoever adds the first id of a record registers the
         * release; an id added after the release took the list starts a new one, which the check below releases,
         * since the record is answered by then.
         */
        void afterRecord(Ack id, CompletableFuture<?> record) {
            boolean[] first = new boolean[1];
            waiting.compute(record, (r, ids) -> {
                if (ids == null) {
                    first[0] = true;
                    ids = new ArrayList<>();
                }
                ids.add(id);
                return ids;
            });
            if (first[0]) {
                record.whenComplete((n, failure) -> release(record));
            }
            if (record.isDone()) {
                release(record);
            }
        }

        /**
         * Moves the ids waiting for {@code record} into the queue and sends them. The move is one step of the map, so
         * that close never finds the lane idle with ids between the two, and no id added meanwhile is left behind.
         */
        private void release(CompletableFuture<?> record) {
            waiting.computeIfPresent(record, (r, ids) -> {
                if (closed) {
                    log.debug("{} acks of {} after close dropped; they stay pending", ids.size(), stream);
                    tell(ids);
                } else {
                    queue.addAll(ids);
                }
                return null;
            });
            sendIfIdle();
        }

        /**
         * Sends one XACK with what is queued unless one is in flight. The reply's callback calls this again, so
         * ids queued while an XACK was on the wire leave as soon as it is answered.
         */
        void sendIfIdle() {
            while (!queue.isEmpty() && sending.compareAndSet(false, true)) {
                List<Ack> batch = new ArrayList<>();
                fill(batch);
                if (batch.isEmpty()) {
                    sending.set(false);
                    continue;
                }
                if (send(batch)) {
                    return;
                }
            }
        }

        /**
         * Sends {@code id}, with what is queued, from this thread, if no XACK is in flight; false if one is (then
         * nothing is sent, and the id is the caller's again).
         */
        boolean sendFromThisThread(Ack id) {
            if (!sending.compareAndSet(false, true)) {
                return false;
            }
            List<Ack> batch = new ArrayList<>();
            batch.add(id);
            fill(batch);
            if (!send(batch)) {
                sendIfIdle(); // what was queued behind the failed send
            }
            return true;
        }

        private void fill(List<Ack> batch) {
            for (Ack id = batch.size() < MAX_IDS_PER_XACK ? queue.poll() : null; id != null;
                 id = batch.size() < MAX_IDS_PER_XACK ? queue.poll() : null) {
                batch.add(id);
            }
        }

        /**
         * Sends {@code batch}, holding {@link #sending}: true once it is on its way (its reply sends what queued
         * meanwhile); false if the send failed at once (reported; {@code sending} is released).
         */
        private boolean send(List<Ack> batch) {
            List<String> ids = new ArrayList<>(batch.size());
            batch.forEach(ack -> ids.add(ack.id()));
            CompletableFuture<Long> reply;
            try {
                reply = scripts.ack(redis, name, group, ids);
            } catch (RuntimeException e) {
                failed(batch.size(), e);
                tell(batch);
                sending.set(false);
                return false;
            }
            reply.whenComplete((n, failure) -> {
                if (failure != null) {
                    failed(batch.size(), failure);
                } else {
                    listener.meters().acked(topic, group, n.intValue());
                }
                tell(batch);
                sending.set(false);
                sendIfIdle();
            });
            return true;
        }

        private void failed(int count, Throwable e) {
            log.warn("XACK of {} entries of {} failed; they stay pending and will be delivered again", count,
                    stream, e);
            listener.onLoopError("acker " + stream + "/" + group, e);
        }
    }
}
