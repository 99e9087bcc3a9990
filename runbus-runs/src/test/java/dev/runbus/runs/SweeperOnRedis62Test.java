package dev.runbus.runs;

import dev.runbus.testkit.RedisTarget;

/** The sweeper's tests on Redis 6.2 (the embedded one), whose answers differ from Redis 7's in places. */
class SweeperOnRedis62Test extends SweeperTest {
    @Override
    protected RedisTarget target() {
        return RedisTarget.embedded62();
    }
}
