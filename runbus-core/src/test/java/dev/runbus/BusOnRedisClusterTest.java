package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.RedisTarget;
import org.junit.jupiter.api.Test;

/**
 * The behaviour suite on a local Redis Cluster of 3 masters and 3 replicas, through {@code redis-cluster://}:
 * every command goes to its key's master, every script touches one slot. The cases that restart or flush a
 * server run on a server of their own, as on the other targets; the two that cut connections through a proxy
 * connect to the master of the topic's slot through it.
 */
class BusOnRedisClusterTest extends BusBehaviourSuite {
    @Override
    OwnRedis startOwnRedis() {
        return OwnRedis.process();
    }

    @Override
    RedisTarget target() {
        return RedisTarget.cluster();
    }

    @Test
    void runsOnACluster() {
        assertThat(target().uri()).startsWith("redis-cluster://");
        assertThat(target().redis().clusterInfo()).contains("cluster_state:ok", "cluster_known_nodes:6");
    }
}
