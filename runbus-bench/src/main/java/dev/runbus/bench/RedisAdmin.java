package dev.runbus.bench;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisBusyException;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;

/**
 * The scenarios' own Redis connection: creates groups, watches pending counts, trims and deletes keys.
 * Never used by a contender.
 */
public final class RedisAdmin implements AutoCloseable {

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;

    public RedisAdmin(String redisUri) {
        this.client = RedisClient.create(redisUri);
        this.connection = client.connect();
        this.redis = connection.sync();
    }

    public RedisClient client() {
        return client;
    }

    public void createGroup(String streamKey, String group) {
        try {
            redis.xgroupCreate(XReadArgs.StreamOffset.from(streamKey, "0"), group, XGroupCreateArgs.Builder.mkstream());
        } catch (RedisBusyException exists) {
            // BUSYGROUP: fine
        }
    }

    /** Entries delivered to the group and not acknowledged. */
    public long pending(String streamKey, String group) {
        return redis.xpending(streamKey, group).getCount();
    }

    /** The string at {@code key}, or null. */
    public String get(String key) {
        return redis.get(key);
    }

    public long length(String streamKey) {
        return redis.xlen(streamKey);
    }

    /** Removes every entry of the stream; its groups stay. */
    public void trim(String streamKey) {
        redis.xtrim(streamKey, 0);
    }

    /** Deletes every key matching the glob pattern; returns how many. */
    public long deleteMatching(String pattern) {
        long deleted = 0;
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page = redis.scan(cursor, ScanArgs.Builder.matches(pattern).limit(1000));
            if (!page.getKeys().isEmpty()) {
                deleted += redis.unlink(page.getKeys().toArray(new String[0]));
            }
            cursor = page;
        } while (!cursor.isFinished());
        return deleted;
    }

    /** Redis's {@code used_memory}, in bytes. */
    public long usedMemory() {
        for (String line : redis.info("memory").split("\r?\n")) {
            if (line.startsWith("used_memory:")) {
                return Long.parseLong(line.substring("used_memory:".length()).trim());
            }
        }
        throw new IllegalStateException("INFO memory has no used_memory");
    }

    /**
     * {@code MEMORY USAGE key SAMPLES 0}: the bytes Redis counts for the key with every nested value looked at (a
     * stream's listpacks, groups and pending lists); 0 when the key does not exist.
     */
    public long memoryUsage(String key) {
        Long bytes = redis.dispatch(CommandType.MEMORY, new IntegerOutput<>(StringCodec.UTF8),
                new CommandArgs<>(StringCodec.UTF8).add("USAGE").addKey(key).add("SAMPLES").add(0));
        return bytes == null ? 0 : bytes;
    }

    /** {@link #memoryUsage} summed over the keys matching the glob pattern. */
    public long memoryUsageMatching(String pattern) {
        long bytes = 0;
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page = redis.scan(cursor, ScanArgs.Builder.matches(pattern).limit(1000));
            for (String key : page.getKeys()) {
                bytes += memoryUsage(key);
            }
            cursor = page;
        } while (!cursor.isFinished());
        return bytes;
    }

    /**
     * {@link #usedMemory} once two reads 100 ms apart agree (at most ten reads): what the server holds, without the
     * buffers of a reply still on its way.
     */
    public long settledUsedMemory() throws InterruptedException {
        long last = usedMemory();
        for (int i = 0; i < 10; i++) {
            Thread.sleep(100);
            long now = usedMemory();
            if (now == last) {
                return now;
            }
            last = now;
        }
        return last;
    }

    /** The server's clock (TIME): microseconds since the epoch. */
    public long serverTimeMicros() {
        java.util.List<String> t = redis.time();
        return Long.parseLong(t.get(0)) * 1_000_000L + Long.parseLong(t.get(1));
    }

    /**
     * Whether the server is Redis 8.2 or later (Valkey answers redis_version 7.2.4): it then has commands runbus
     * uses only there, and the benchmark measures runbus also on the path older servers get. False when the whole
     * benchmark runs with {@code -Drunbus.redis.commandsUpTo}: every bus is capped then, and both "paths" would be
     * the same one.
     */
    public boolean hasRedis8Commands() {
        if (System.getProperty("runbus.redis.commandsUpTo") != null) {
            return false;
        }
        String[] v = serverVersion().split("\\.");
        try {
            int major = Integer.parseInt(v[0]);
            int minor = v.length > 1 ? Integer.parseInt(v[1]) : 0;
            return major > 8 || major == 8 && minor >= 2;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** The server's command counters and CPU time now ({@code INFO everything}). */
    ServerCounters counters() {
        return ServerCounters.parse(redis.info("everything"));
    }

    public String serverVersion() {
        String info = redis.info("server");
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                return line.substring("redis_version:".length()).trim();
            }
        }
        return "unknown";
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }
}
