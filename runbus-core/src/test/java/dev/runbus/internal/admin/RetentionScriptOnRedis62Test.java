package dev.runbus.internal.admin;

import dev.runbus.testkit.RedisTarget;

/** The retention scripts on an embedded Redis 6.2: XINFO GROUPS without entries-read and lag. */
class RetentionScriptOnRedis62Test extends RetentionScriptTest {
    @Override
    RedisTarget target() {
        return RedisTarget.embedded62();
    }
}
