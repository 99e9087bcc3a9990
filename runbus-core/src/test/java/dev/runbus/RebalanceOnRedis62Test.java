package dev.runbus;

import dev.runbus.testkit.RedisTarget;

/** Rebalancing an ordered group on an embedded Redis 6.2. */
class RebalanceOnRedis62Test extends RebalanceTest {
    @Override
    RedisTarget target() {
        return RedisTarget.embedded62();
    }
}
