package dev.runbus;

import dev.runbus.testkit.RedisServerProcess;
import java.util.stream.Stream;

/** The Redis-side fault property on an embedded Redis 6.2: one seed in a normal build, to keep its time. */
class RedisFaultsPropertyOnRedis62Test extends RedisFaultsPropertyTest {

    static Stream<Long> seeds() {
        return seeds(7L);
    }

    @Override
    RedisServerProcess startServer() {
        return RedisServerProcess.startEmbedded62();
    }
}
