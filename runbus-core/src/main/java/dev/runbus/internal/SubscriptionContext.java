package dev.runbus.internal;

import dev.runbus.SubscribeOptions;
import java.util.List;

/**
 * Who a subscription is and how it was configured; shared by its loops.
 *
 * @param partitions the topic's partitions
 * @param streamKeys the stream key of each partition, by partition number
 */
record SubscriptionContext(String topic, String group, String consumer, Partitions partitions,
                           List<String> streamKeys, SubscribeOptions options) {

    SubscriptionContext {
        streamKeys = List.copyOf(streamKeys);
    }

    static SubscriptionContext of(String topic, String group, String consumer, Partitions partitions, Keys keys,
                                  SubscribeOptions options) {
        return new SubscriptionContext(topic, group, consumer, partitions,
                partitions.names().stream().map(keys::stream).toList(), options);
    }

    /** The stream of partition 0: the topic's only stream unless it has several partitions. */
    String streamKey() {
        return streamKeys.get(0);
    }

    String streamKey(int partition) {
        return streamKeys.get(partition);
    }

    /** The name partition {@code p}'s keys are built from. */
    String name(int partition) {
        return partitions.name(partition);
    }

    String describe() {
        return topic + "/" + group + "/" + consumer;
    }
}
