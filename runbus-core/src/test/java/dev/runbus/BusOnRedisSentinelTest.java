package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.RedisTarget;
import org.junit.jupiter.api.Test;

/**
 * The behaviour suite on a master found through 3 Sentinels ({@code redis-sentinel://…#runbus}), with a replica.
 * The cases that restart or flush a server run on a server of their own, as on the other targets.
 */
class BusOnRedisSentinelTest extends BusBehaviourSuite {
    @Override
    OwnRedis startOwnRedis() {
        return OwnRedis.process();
    }

    @Override
    RedisTarget target() {
        return RedisTarget.sentinel();
    }

    @Test
    void runsThroughSentinels() {
        assertThat(target().uri()).startsWith("redis-sentinel://").endsWith("#runbus");
        assertThat(target().redis().info("replication")).contains("role:master", "connected_slaves:1");
    }
}
