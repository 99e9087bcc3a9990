package dev.runbus.server;

import dev.runbus.internal.RedisLink;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Deletes the keys of a prefix (the demo's own, on servers it did not start); on a cluster, on every master. */
final class RedisKeys {

    private RedisKeys() {
    }

    static void deleteAll(String uri, String prefix) {
        try (RedisLink link = RedisLink.open(uri, Duration.ofSeconds(10))) {
            List<String> batch = new ArrayList<>();
            ScanIterator<String> it = ScanIterator.scan(link.sync(), ScanArgs.Builder.matches(prefix + ":*").limit(500));
            while (it.hasNext()) {
                batch.add(it.next());
                if (batch.size() == 500) {
                    link.sync().del(batch.toArray(new String[0]));
                    batch.clear();
                }
            }
            if (!batch.isEmpty()) {
                link.sync().del(batch.toArray(new String[0]));
            }
        }
    }
}
