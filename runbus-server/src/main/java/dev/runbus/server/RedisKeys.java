package dev.runbus.server;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.ArrayList;
import java.util.List;

/** Deletes the keys of a prefix (the demo's own, on servers it did not start). */
final class RedisKeys {

    private RedisKeys() {
    }

    static void deleteAll(String uri, String prefix) {
        RedisClient client = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            List<String> batch = new ArrayList<>();
            ScanIterator<String> it = ScanIterator.scan(c.sync(), ScanArgs.Builder.matches(prefix + ":*").limit(500));
            while (it.hasNext()) {
                batch.add(it.next());
                if (batch.size() == 500) {
                    c.sync().del(batch.toArray(new String[0]));
                    batch.clear();
                }
            }
            if (!batch.isEmpty()) {
                c.sync().del(batch.toArray(new String[0]));
            }
        } finally {
            client.shutdown();
        }
    }
}
