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
        long deleted = 0;
        try (RedisLink link = RedisLink.open(redisUrl, Duration.ofSeconds(10))) {
            List<String> batch = new ArrayList<>();
            ScanIterator<String> it = ScanIterator.scan(link.sync(), ScanArgs.Builder.matches(prefix + ":*").limit(500));
            while (it.hasNext()) {
                batch.add(it.next());
                if (batch.size() == 500 || !it.hasNext()) {
                    deleted += link.sync().del(batch.toArray(new String[0]));
                    batch.clear();
                }
            }
        }
        return deleted;
    }
}
