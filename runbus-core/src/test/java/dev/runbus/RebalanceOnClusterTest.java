package dev.runbus;

import dev.runbus.testkit.RedisTarget;

/** Rebalancing an ordered group's partitions on a local Redis Cluster of 3 masters. */
class RebalanceOnClusterTest extends RebalanceTest {
    @Override
    RedisTarget target() {
        return RedisTarget.cluster();
    }
}
