package dev.runbus;

import dev.runbus.testkit.RedisTarget;

/** The delayed delivery test on a Redis Cluster of 3 masters. */
class DelayedDeliveryOnClusterTest extends DelayedDeliveryTest {
    @Override
    RedisTarget target() {
        return RedisTarget.cluster();
    }
}
