package dev.runbus.internal;

import dev.runbus.Message;
import dev.runbus.PublishOptions;
import dev.runbus.Publisher;
import dev.runbus.RunbusException;
import dev.runbus.internal.delay.DelayMover;
import dev.runbus.internal.delay.ScheduledIds;
import dev.runbus.internal.flow.FlowCaps;
import dev.runbus.internal.redis.BatchConnection;
import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.WireFormat;
import dev.runbus.internal.registry.TopicRegistry;
import dev.runbus.internal.scripts.ScriptCalls;
import dev.runbus.internal.scripts.Scripts;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.XAddArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * XADD of encoded messages. A batch is pipelined on a connection reserved for batches: its commands are
 * queued with auto-flush off and written to the socket in one flush, then the replies are awaited. One
 * write for the whole batch instead of one per message is what makes batch publishing fast. On Redis 8.6 each
 * XADD carries {@code IDMP} ({@link IdempotentAppends}).
 *
 * <p>A message with a {@link Message#flowKey() flow key} is parked instead ({@code flow.lua}, {@link FlowCaps}): its
 * flow key chooses the partition, and it enters the stream when its key has a free slot, at once if it has one now.
 */
final class RedisPublisher implements Publisher {

    private static final Logger log = LoggerFactory.getLogger(RedisPublisher.class);

    private final RedisClusterAsyncCommands<String, byte[]> redis;
    private final BatchConnection batches;
    private final Keys keys;
    private final TopicRegistry topics;
    private final XAddArgs addArgs;
    private final long timeoutMillis;
    private final Scripts scripts;
    private final ScriptCalls calls;
    private final DelayMover mover;
    /** The bus's, shared by its publishers: one producer id per connection, not one per publisher. */
    private final IdempotentAppends appends;
    private final boolean idempotent;
    private final long maxLenApprox;

    /** The producer-id suffixes of the bus's shared connection and of its batch connection. */
    private static final String SHARED = "";
    private static final String BATCH = ":b";

    RedisPublisher(RedisClusterAsyncCommands<String, byte[]> redis, BatchConnection batches, Keys keys, TopicRegistry topics,
                   PublishOptions options, long timeoutMillis, Scripts scripts, ScriptCalls calls, DelayMover mover,
                   IdempotentAppends appends) {
        this.redis = redis;
        this.calls = calls;
        this.appends = appends;
        this.idempotent = options.idempotentAppends();
        this.maxLenApprox = options.maxLenApprox();
        this.scripts = scripts;
        this.mover = mover;
        this.batches = batches;
        this.keys = keys;
        this.topics = topics;
        this.timeoutMillis = timeoutMillis;
        if (options.maxLenApprox() > 0) {
            this.addArgs = new XAddArgs().maxlen(options.maxLenApprox()).approximateTrimming(true);
            log.warn("publisher caps streams at about {} entries: entries may be trimmed before every group has "
                    + "acknowledged them (they are then reported as trimmed while pending)", options.maxLenApprox());
        } else {
            this.addArgs = null;
        }
    }

    @Override
    public String publish(String topic, Message message) {
        Objects.requireNonNull(message, "message");
        Partitions partitions = prepare(topic);
        int p = partitionFor(partitions, message);
        if (message.flowKey() != null) {
            boolean idmp = idempotent && appends.on();
            String what = "publishing to " + topic;
            try {
                return partitions.qualify(p, Calls.await(what, park(redis, partitions.name(p), message, SHARED, idmp),
                        timeoutMillis));
            } catch (RunbusException e) {
                if (idmp && appends.refusedBy(e)) { // refused, so not parked: again, plainly
                    return partitions.qualify(p, Calls.await(what,
                            park(redis, partitions.name(p), message, SHARED, false), timeoutMillis));
                }
                throw e;
            }
        }
        return partitions.qualify(p, append("publishing to " + topic, keys.stream(partitions.name(p)),
                WireFormat.encode(message)));
    }

    /** The partition of a message: its flow key's when it has one (its waiting entries and holds live there). */
    private static int partitionFor(Partitions partitions, Message message) {
        return partitions.partitionFor(message.flowKey() != null ? message.flowKey() : message.key());
    }

    /**
     * Parks a message with a flow key in partition {@code name}; the id is its parked entry's, its place among the
     * entries waiting for a slot (it gets a stream id when it enters the stream). With {@code idmp} the park's
     * {@code XADD} carries {@code IDMP} (the producer of {@code connection}), so a park re-sent after its reply was
     * lost parks nothing more.
     */
    private CompletableFuture<String> park(RedisClusterAsyncCommands<String, byte[]> via, String name,
                                          Message message, String connection, boolean idmp) {
        Map<String, byte[]> fields = WireFormat.encode(message);
        fields.remove(WireFormat.FLOW_KEY); // the script adds it, with the entry's place in its key's queue
        FlowCaps caps = new FlowCaps(calls, null, via, keys, name);
        return (idmp ? caps.parkAsync(message.flowKey(), fields, appends.nextPark(connection))
                : caps.parkAsync(message.flowKey(), fields)).thenApply(FlowCaps.Parked::parkedId);
    }

    /** One XADD on the shared connection, awaited; sent again without IDMP if the server refuses it. */
    private String append(String what, String stream, Map<String, byte[]> fields) {
        boolean idmp = idempotent && appends.on();
        try {
            return Calls.await(what, add(redis, stream, fields, SHARED, idmp), timeoutMillis);
        } catch (RunbusException e) {
            if (idmp && appends.refusedBy(e)) {
                return Calls.await(what, add(redis, stream, fields, SHARED, false), timeoutMillis);
            }
            throw e;
        }
    }

    @Override
    public List<String> publishAll(String topic, List<Message> messages) {
        Objects.requireNonNull(messages, "messages");
        messages.forEach(m -> Objects.requireNonNull(m, "a message in the batch is null"));
        Partitions partitions = prepare(topic);
        int[] partitionOf = new int[messages.size()];
        for (int i = 0; i < partitionOf.length; i++) {
            partitionOf[i] = partitionFor(partitions, messages.get(i));
        }
        List<Map<String, byte[]>> fields = new ArrayList<>(messages.size());
        messages.forEach(m -> fields.add(WireFormat.encode(m)));
        boolean idmp = idempotent && appends.on();
        List<CompletionStage<String>> sent = batches.pipeline(async -> {
            List<CompletionStage<String>> futures = new ArrayList<>(messages.size());
            for (int i = 0; i < partitionOf.length; i++) {
                String name = partitions.name(partitionOf[i]);
                futures.add(messages.get(i).flowKey() != null ? park(async, name, messages.get(i), BATCH, idmp)
                        : add(async, keys.stream(name), fields.get(i), BATCH, idmp));
            }
            return futures;
        });
        List<String> ids = new ArrayList<>(messages.size());
        for (CompletionStage<String> f : sent) {
            int i = ids.size();
            String what = "publishing to " + topic;
            try {
                String id;
                try {
                    id = Calls.await(what, f.toCompletableFuture(), timeoutMillis);
                } catch (RunbusException e) {
                    if (!idmp || !appends.refusedBy(e)) {
                        throw e;
                    }
                    // Refused, so not appended: this one again, plainly (the rest of the batch as it comes).
                    String name = partitions.name(partitionOf[i]);
                    id = messages.get(i).flowKey() != null
                            ? Calls.await(what, park(redis, name, messages.get(i), SHARED, false), timeoutMillis)
                            : append(what, keys.stream(name), fields.get(i));
                }
                ids.add(partitions.qualify(partitionOf[i], id));
            } catch (RunbusException e) {
                throw new RunbusException("publishing a batch to " + topic + " failed after " + ids.size() + " of "
                        + messages.size() + " messages were appended (later ones may have been too): "
                        + e.getMessage(), e);
            }
        }
        return ids;
    }

    @Override
    public String publish(String topic, Message message, Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative, got " + delay);
        }
        return schedule(topic, message, true, millis("delay", delay::toMillis));
    }

    @Override
    public String publishAt(String topic, Message message, Instant dueAt) {
        Objects.requireNonNull(dueAt, "dueAt");
        return schedule(topic, message, false, millis("dueAt", dueAt::toEpochMilli));
    }

    /** A time in milliseconds; one that does not fit is refused by name rather than overflowing. */
    private static long millis(String what, java.util.function.LongSupplier toMillis) {
        try {
            return toMillis.getAsLong();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(what + " is out of range: it must fit in epoch milliseconds");
        }
    }

    /** Into the delay set of the message's partition; the mover of this bus is told when it is due. */
    private String schedule(String topic, Message message, boolean relative, long millis) {
        Objects.requireNonNull(message, "message");
        Map<String, byte[]> fields = WireFormat.encode(message); // at most 256 headers: well within Lua's unpack()
        Partitions partitions = prepare(topic);
        // A flow key's partition, as for a publish now: its slots are counted there, and an entry confirmed in
        // another partition would be counted against another count of its key.
        int p = partitionFor(partitions, message);
        String name = partitions.name(p);
        String id = ScheduledIds.next();
        Scripts.Schedule s = Calls.await("scheduling a message on " + topic,
                scripts.schedule(name, id, relative, millis, fields), timeoutMillis);
        mover.hint(name, s.dueMillis() - s.nowMillis());
        return partitions.qualify(p, id);
    }

    private Partitions prepare(String topic) {
        Keys.checkTopic(topic);
        return topics.register(topic);
    }

    private RedisFuture<String> add(RedisClusterAsyncCommands<String, byte[]> async, String stream,
                                    Map<String, byte[]> fields, String connection, boolean idmp) {
        if (idmp) {
            return async.xadd(stream, appends.next(connection, maxLenApprox), fields);
        }
        return addArgs == null ? async.xadd(stream, fields) : async.xadd(stream, addArgs, fields);
    }
}
