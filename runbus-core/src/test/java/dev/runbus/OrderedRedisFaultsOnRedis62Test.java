package dev.runbus;

import dev.runbus.testkit.OwnRedis;

/** The ordered groups' Redis-side fault tests on an embedded Redis 6.2. */
class OrderedRedisFaultsOnRedis62Test extends OrderedRedisFaultsTest {
    @Override
    OwnRedis ownRedis() {
        return OwnRedis.embedded62();
    }
}
