package dev.runbus;

import dev.runbus.testkit.RedisTarget;

/** The delayed delivery test on an embedded Redis 6.2. */
class DelayedDeliveryOnRedis62Test extends DelayedDeliveryTest {
    @Override
    RedisTarget target() {
        return RedisTarget.embedded62();
    }
}
