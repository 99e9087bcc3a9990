package dev.runbus;

import dev.runbus.testkit.RedisTarget;

/** The ordered fault test on an embedded Redis 6.2. */
class OrderedFaultsOnRedis62Test extends OrderedFaultsTest {
    @Override
    RedisTarget target() {
        return RedisTarget.embedded62();
    }
}
