package dev.runbus.internal.consume;

import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
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
 * ({@link #ackNow}) sends a plain XACK: it records no starts, since it never delivers an entry twice.
 */
final class Acker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Acker.class);
    private static final int MAX_IDS_PER_XACK = 1000;

    private final Scripts scripts;
    private final RedisClusterAsyncCommands<String, byte[]> redis;
    private final String topic;
    private final String group;
    private final long timeoutMillis;
    private final SafeListener listener;
    /** By partition number. */
    private final List<Lane> lanes;
    private volatile boolean closed;

    /** {@code scripts} and {@code redis} talk over the same connection. */
    Acker(Scripts scripts, RedisClusterAsyncCommands<String, byte[]> redis, SubscriptionContext ctx, long timeoutMillis,
          SafeListener listener) {
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

    void ack(int partition, String streamId) {
        if (closed) {
            log.debug("ack of {} of partition {} after close dropped; it stays pending", streamId, partition);
            return;
        }
        Lane lane = lanes.get(partition);
        lane.queue.add(streamId);
        lane.sendIfIdle();
    }

    /** Acknowledges now and waits for the replies (ack-before-work mode); {@code ids} by partition. */
    void ackNow(Map<Integer, List<String>> ids) {
        List<RedisFuture<Long>> sent = new ArrayList<>(ids.size());
        try {
            ids.forEach((p, list) -> sent.add(redis.xack(lanes.get(p).stream, group, list.toArray(new String[0]))));
            for (RedisFuture<Long> reply : sent) {
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
            if (!lane.queue.isEmpty()) {
                log.warn("{} acks of {}/{} not sent before close; those entries stay pending", lane.queue.size(),
                        lane.stream, group);
            }
        }
    }

    /** The acks of one partition's stream: its queue and whether its XACK is on the wire. */
    private final class Lane {
        final String stream;
        /** The partition's name, for its start record. */
        final String name;
        final Queue<String> queue = new ConcurrentLinkedQueue<>();
        final AtomicBoolean sending = new AtomicBoolean();

        Lane(String stream, String name) {
            this.stream = stream;
            this.name = name;
        }

        boolean busy() {
            return !queue.isEmpty() || sending.get();
        }

        /**
         * Sends one XACK with what is queued unless one is in flight. The reply's callback calls this again, so
         * ids queued while an XACK was on the wire leave as soon as it is answered.
         */
        void sendIfIdle() {
            while (!queue.isEmpty() && sending.compareAndSet(false, true)) {
                List<String> batch = new ArrayList<>();
                for (String id = queue.poll(); id != null;
                     id = batch.size() < MAX_IDS_PER_XACK ? queue.poll() : null) {
                    batch.add(id);
                }
                if (batch.isEmpty()) {
                    sending.set(false);
                    continue;
                }
                CompletableFuture<Long> reply;
                try {
                    reply = scripts.ack(redis, name, group, batch);
                } catch (RuntimeException e) {
                    failed(batch.size(), e);
                    sending.set(false);
                    continue;
                }
                reply.whenComplete((n, failure) -> {
                    if (failure != null) {
                        failed(batch.size(), failure);
                    } else {
                        listener.meters().acked(topic, group, n.intValue());
                    }
                    sending.set(false);
                    sendIfIdle();
                });
                return;
            }
        }

        private void failed(int count, Throwable e) {
            log.warn("XACK of {} entries of {} failed; they stay pending and will be delivered again", count,
                    stream, e);
            listener.onLoopError("acker " + stream + "/" + group, e);
        }
    }
}
