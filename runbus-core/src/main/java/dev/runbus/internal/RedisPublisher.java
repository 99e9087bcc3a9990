package dev.runbus.internal;

import dev.runbus.Message;
import dev.runbus.PublishOptions;
import dev.runbus.Publisher;
import dev.runbus.RunbusException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.XAddArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * XADD of encoded messages. A batch is pipelined on a connection reserved for batches: its commands are
 * queued with auto-flush off and written to the socket in one flush, then the replies are awaited. One
 * write for the whole batch instead of one per message is what makes batch publishing fast.
 */
final class RedisPublisher implements Publisher {

    private static final Logger log = LoggerFactory.getLogger(RedisPublisher.class);

    private final RedisClusterAsyncCommands<String, byte[]> redis;
    private final BatchConnection batches;
    private final Keys keys;
    private final TopicRegistry topics;
    private final XAddArgs addArgs;
    private final long timeoutMillis;

    RedisPublisher(RedisClusterAsyncCommands<String, byte[]> redis, BatchConnection batches, Keys keys, TopicRegistry topics,
                   PublishOptions options, long timeoutMillis) {
        this.redis = redis;
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
        int p = partitions.partitionFor(message.key());
        return partitions.qualify(p, Calls.await("publishing to " + topic,
                add(redis, keys.stream(partitions.name(p)), message), timeoutMillis));
    }

    @Override
    public List<String> publishAll(String topic, List<Message> messages) {
        Objects.requireNonNull(messages, "messages");
        messages.forEach(m -> Objects.requireNonNull(m, "a message in the batch is null"));
        Partitions partitions = prepare(topic);
        int[] partitionOf = new int[messages.size()];
        for (int i = 0; i < partitionOf.length; i++) {
            partitionOf[i] = partitions.partitionFor(messages.get(i).key());
        }
        List<RedisFuture<String>> sent = batches.pipeline(async -> {
            List<RedisFuture<String>> futures = new ArrayList<>(messages.size());
            for (int i = 0; i < partitionOf.length; i++) {
                futures.add(add(async, keys.stream(partitions.name(partitionOf[i])), messages.get(i)));
            }
            return futures;
        });
        List<String> ids = new ArrayList<>(messages.size());
        for (RedisFuture<String> f : sent) {
            try {
                ids.add(partitions.qualify(partitionOf[ids.size()],
                        Calls.await("publishing to " + topic, f, timeoutMillis)));
            } catch (RunbusException e) {
                throw new RunbusException("publishing a batch to " + topic + " failed after " + ids.size() + " of "
                        + messages.size() + " messages were appended (later ones may have been too): "
                        + e.getMessage(), e);
            }
        }
        return ids;
    }

    private Partitions prepare(String topic) {
        Keys.checkTopic(topic);
        return topics.register(topic);
    }

    private RedisFuture<String> add(RedisClusterAsyncCommands<String, byte[]> async, String stream, Message m) {
        return addArgs == null ? async.xadd(stream, WireFormat.encode(m)) : async.xadd(stream, addArgs,
                WireFormat.encode(m));
    }
}
