package dev.runbus;

import dev.runbus.testkit.RedisTarget;

/** Retention on an embedded Redis 6.2 (XINFO GROUPS without entries-read and lag). */
class RetentionOnRedis62Test extends RetentionTest {
    @Override
    RedisTarget target() {
        return RedisTarget.embedded62();
    }
}
