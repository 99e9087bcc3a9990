package dev.runbus;

import dev.runbus.testing.RedisTarget;

/** The behaviour suite on an embedded Redis 6.2: XAUTOCLAIM replies with two elements and nil entries. */
class BusOnRedis62Test extends BusBehaviourSuite {
    @Override
    RedisTarget target() {
        return RedisTarget.embedded62();
    }
}
