package dev.runbus.runs.internal.sweep;

import dev.runbus.testkit.RedisTarget;

/** The liveness tests on Redis 6.2 (the embedded one), whose answers differ from Redis 7's in places. */
class LivenessOnRedis62Test extends LivenessTest {
    @Override
    protected RedisTarget target() {
        return RedisTarget.embedded62();
    }
}
