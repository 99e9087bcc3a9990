package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testing.RedisTarget;
import org.junit.jupiter.api.Test;

/** The behaviour suite on the machine's Redis 7: XAUTOCLAIM replies with three elements. */
class BusOnRedis7Test extends BusBehaviourSuite {
    @Override
    RedisTarget target() {
        return RedisTarget.local();
    }

    @Test
    void runsOnRedis7OrLater() {
        assertThat(Integer.parseInt(target().version().split("\\.")[0])).isGreaterThanOrEqualTo(7);
    }
}
