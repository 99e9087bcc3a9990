package dev.runbus;

import dev.runbus.testkit.RedisTarget;

/**
 * Retention on a Redis Cluster of 3 masters: each partition's script touches its own stream only, so the
 * partitions of a topic, spread over the masters, are trimmed each on its own node.
 */
class RetentionOnClusterTest extends RetentionTest {
    @Override
    RedisTarget target() {
        return RedisTarget.cluster();
    }
}
