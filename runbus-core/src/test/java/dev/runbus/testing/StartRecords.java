package dev.runbus.testing;

import dev.runbus.testkit.Wait;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The unordered groups' start records under a key prefix, on one server: a field lives as long as its entry is
 * pending (the acks remove it, and the janitor's sweep what a fault left behind), so no record holds more fields
 * than its group has pending entries.
 */
public final class StartRecords {

    private StartRecords() {
    }

    /** Waits until every start record under {@code prefix} holds no more fields than its group's pending entries. */
    public static void awaitNoMoreThanPending(RedisCommands<String, String> redis, String prefix, Duration timeout) {
        Wait.until("no start record under " + prefix + " with more fields than pending entries (now: "
                + overfull(redis, prefix) + ")", timeout, () -> overfull(redis, prefix).isEmpty());
    }

    /** The records holding more fields than their group's pending entries, as "key: fields > pending". */
    public static List<String> overfull(RedisCommands<String, String> redis, String prefix) {
        List<String> out = new ArrayList<>();
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page = redis.scan(cursor, ScanArgs.Builder.matches(prefix + ":*:starts:*").limit(500));
            for (String key : page.getKeys()) {
                int at = key.lastIndexOf(":starts:");
                String stream = key.substring(0, at) + ":stream";
                String group = key.substring(at + ":starts:".length());
                long fields = redis.hlen(key);
                long pending = redis.exists(stream) == 0 ? 0 : pendingOrZero(redis, stream, group);
                if (fields > pending) {
                    out.add(key + ": " + fields + " > " + pending);
                }
            }
            cursor = page;
        } while (!cursor.isFinished());
        return out;
    }

    private static long pendingOrZero(RedisCommands<String, String> redis, String stream, String group) {
        try {
            return redis.xpending(stream, group).getCount();
        } catch (RuntimeException noGroup) {
            return 0;
        }
    }
}
