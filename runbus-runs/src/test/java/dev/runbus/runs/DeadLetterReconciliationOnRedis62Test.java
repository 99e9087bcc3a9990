package dev.runbus.runs;

import dev.runbus.testkit.RedisTarget;

/** The dead-letter reconciliation tests on Redis 6.2 (the embedded one), whose answers differ from Redis 7's in places. */
class DeadLetterReconciliationOnRedis62Test extends DeadLetterReconciliationTest {
    @Override
    protected RedisTarget target() {
        return RedisTarget.embedded62();
    }
}
