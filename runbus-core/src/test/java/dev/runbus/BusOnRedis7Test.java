package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import org.junit.jupiter.api.Test;

/**
 * The behaviour suite on the machine's Redis 7: XAUTOCLAIM replies with three elements. On a machine without
 * Redis the suite runs on the server {@link TestServers} starts, which is 6.2 when only the embedded binary is
 * there; the version check is then reported skipped, not passed.
 */
class BusOnRedis7Test extends BusBehaviourSuite {
    @Override
    OwnRedis startOwnRedis() {
        return OwnRedis.process();
    }

    @Override
    RedisTarget target() {
        return RedisTarget.local();
    }

    @Test
    void runsOnRedis7OrLater() {
        int major = Integer.parseInt(target().version().split("\\.")[0]);
        assumeTrue(major >= 7 || !TestServers.startedOwnRedis(),
                "no Redis 7 on this machine: the suite ran on the tests' own Redis " + target().version());
        assertThat(major).isGreaterThanOrEqualTo(7);
    }
}
