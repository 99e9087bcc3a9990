package dev.runbus.internal;

import dev.runbus.SubscribeOptions;

/** Who a subscription is and how it was configured; shared by its loops. */
record SubscriptionContext(String topic, String group, String consumer, String streamKey, SubscribeOptions options) {

    String describe() {
        return topic + "/" + group + "/" + consumer;
    }
}
