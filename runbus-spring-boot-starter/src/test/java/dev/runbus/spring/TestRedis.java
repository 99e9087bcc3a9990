package dev.runbus.spring;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** The shared test Redis: a key prefix of each test's own, and removing its keys (never a flush). */
final class TestRedis {

    static final String URL = dev.runbus.testing.TestServers.redisUri();

    private TestRedis() {
    }

    static String newPrefix() {
        return "rbboot-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static void deleteKeys(String prefix) {
        RedisClient client = RedisClient.create(URL);
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            ScanIterator<String> keys = ScanIterator.scan(c.sync(), ScanArgs.Builder.matches(prefix + ":*").limit(500));
            List<String> batch = new ArrayList<>();
            keys.forEachRemaining(batch::add);
            if (!batch.isEmpty()) {
                c.sync().unlink(batch.toArray(String[]::new));
            }
        } finally {
            client.shutdown();
        }
    }
}
