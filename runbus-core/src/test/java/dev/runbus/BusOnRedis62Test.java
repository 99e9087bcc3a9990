package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.RedisTarget;
import org.junit.jupiter.api.Test;

/** The behaviour suite on an embedded Redis 6.2: XAUTOCLAIM replies with two elements and nil entries. */
class BusOnRedis62Test extends BusBehaviourSuite {
    @Override
    OwnRedis startOwnRedis() {
        return OwnRedis.embedded62();
    }

    @Override
    RedisTarget target() {
        return RedisTarget.embedded62();
    }

    @Test
    void runsOnRedis62() {
        assertThat(target().version()).startsWith("6.2.");
    }
}
