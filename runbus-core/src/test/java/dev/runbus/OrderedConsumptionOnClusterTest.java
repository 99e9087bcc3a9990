package dev.runbus;

import dev.runbus.testkit.RedisTarget;

/**
 * Ordered consumption on a local Redis Cluster of 3 masters: leases, fenced reads, claims and acks each go to
 * the master of their partition's slot, and the wait for new entries polls the partitions' masters.
 */
class OrderedConsumptionOnClusterTest extends OrderedConsumptionTest {
    @Override
    RedisTarget target() {
        return RedisTarget.cluster();
    }
}
