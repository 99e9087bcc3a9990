package dev.runbus;

import dev.runbus.testing.RedisTarget;

/** The behaviour suite on the machine's Redis 7: XAUTOCLAIM replies with three elements. */
class BusOnRedis7Test extends BusBehaviourSuite {
    @Override
    RedisTarget target() {
        return RedisTarget.local();
    }
}
