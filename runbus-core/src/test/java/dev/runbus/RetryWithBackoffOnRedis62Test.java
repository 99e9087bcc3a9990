package dev.runbus;

import dev.runbus.testkit.RedisTarget;

/** The retry test on an embedded Redis 6.2. */
class RetryWithBackoffOnRedis62Test extends RetryWithBackoffTest {
    @Override
    RedisTarget target() {
        return RedisTarget.embedded62();
    }
}
