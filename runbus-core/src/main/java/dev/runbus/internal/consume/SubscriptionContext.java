package dev.runbus.internal.consume;

import dev.runbus.SubscribeOptions;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import java.util.List;

/**
 * Who a subscription is and how it was configured; shared by its loops.
 *
 * @param partitions the topic and its partitions
 * @param streamKeys the stream key of each partition, by partition number
 */
public record SubscriptionContext(String group, String consumer, Partitions partitions, List<String> streamKeys,
                           SubscribeOptions options) {

    public SubscriptionContext {
        streamKeys = List.copyOf(streamKeys);
    }

    public static SubscriptionContext of(String group, String consumer, Partitions partitions, Keys keys,
                                  SubscribeOptions options) {
        return new SubscriptionContext(group, consumer, partitions,
                partitions.names().stream().map(keys::stream).toList(), options);
    }

    public String topic() {
        return partitions.topic();
    }

    public String streamKey(int partition) {
        return streamKeys.get(partition);
    }

    /** The name partition {@code p}'s keys are built from. */
    public String name(int partition) {
        return partitions.name(partition);
    }

    /** The id handed out for entry {@code streamId} of {@code partition}: the stream id for a plain topic. */
    public String qualify(int partition, String streamId) {
        return partitions.qualify(partition, streamId);
    }

    /** {@link #qualify} for each of a partition's stream ids, for listener reports. */
    public List<String> qualify(int partition, List<String> streamIds) {
        return partitions.partitioned() ? streamIds.stream().map(id -> qualify(partition, id)).toList() : streamIds;
    }

    public String describe() {
        return topic() + "/" + group + "/" + consumer;
    }
}
