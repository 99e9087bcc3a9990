package dev.runbus;

import dev.runbus.testkit.RedisServerProcess;

/** The liveness property on Redis 6.2 (XAUTOCLAIM's two-element reply, deleted entries kept pending). */
class ConsumerLivenessPropertyOnRedis62Test extends ConsumerLivenessPropertyTest {
    @Override
    RedisServerProcess startServer() {
        return RedisServerProcess.startEmbedded62();
    }
}
