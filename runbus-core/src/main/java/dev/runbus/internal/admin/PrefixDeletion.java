package dev.runbus.internal.admin;

import dev.runbus.BusConfig;
import dev.runbus.internal.redis.RedisLink;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link dev.runbus.KeyPrefix#deleteAll} does, behind the public API: scans {@code prefix:*} on every master
 * and deletes in batches of 500.
 */
public final class PrefixDeletion {

    private PrefixDeletion() {
    }

    /** Deletes every key under {@code prefix} on the Redis the URL names; returns how many. */
    public static long deleteAll(String redisUrl, String prefix) {
        try (RedisLink link = RedisLink.open(redisUrl, Duration.ofSeconds(10))) {
            return deleteAll(link, prefix);
        }
    }

    /** Deletes every key under {@code config}'s key prefix, reaching Redis as a bus with that configuration would. */
    public static long deleteAll(BusConfig config) {
        try (RedisLink link = RedisLink.open(config)) {
            return deleteAll(link, config.keyPrefix());
        }
    }

    private static long deleteAll(RedisLink link, String prefix) {
        long deleted = 0;
        List<String> batch = new ArrayList<>();
        ScanIterator<String> it = ScanIterator.scan(link.sync(), ScanArgs.Builder.matches(prefix + ":*").limit(500));
        while (it.hasNext()) {
            batch.add(it.next());
            if (batch.size() == 500 || !it.hasNext()) {
                deleted += link.sync().del(batch.toArray(new String[0]));
                batch.clear();
            }
        }
        return deleted;
    }
}
