package dev.runbus;

import dev.runbus.internal.RedisLink;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Operations on all the keys under one key prefix, for tools (the demo cleans up its own with it). */
public final class KeyPrefix {

    private KeyPrefix() {
    }

    /**
     * Deletes every key under {@code prefix} ({@code prefix:*}) on the Redis the URL names: one server, the
     * Sentinels' master, or every master of a cluster. Returns how many were deleted.
     *
     * @throws IllegalArgumentException if the URL is not one runbus reads
     * @throws RunbusException if Redis cannot be reached
     */
    public static long deleteAll(String redisUrl, String prefix) {
        try (RedisLink link = RedisLink.open(redisUrl, Duration.ofSeconds(10))) {
            return deleteAll(link, prefix);
        }
    }

    /**
     * Deletes every key under {@code config}'s key prefix, reaching Redis as a bus with that configuration would:
     * its URL, the credentials given apart from it, its trusted CAs.
     *
     * @throws RunbusException if Redis cannot be reached
     */
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
