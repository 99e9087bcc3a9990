package dev.runbus;

import dev.runbus.testkit.RedisTarget;

/** Ordered consumption on an embedded Redis 6.2. */
class OrderedConsumptionOnRedis62Test extends OrderedConsumptionTest {
    @Override
    RedisTarget target() {
        return RedisTarget.embedded62();
    }
}
