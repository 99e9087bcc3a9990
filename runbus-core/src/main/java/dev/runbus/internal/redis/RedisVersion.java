package dev.runbus.internal.redis;

import dev.runbus.RunbusException;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;

/**
 * The server's version as its {@code INFO server} says it: {@code redis_version}, which Valkey also answers (7.2.4
 * for every Valkey so far, the Redis it forked from), and {@code valkey_version} on Valkey. The bus needs Redis 6.2
 * or later: XAUTOCLAIM and XPENDING's IDLE filter arrived in 6.2.
 *
 * @param product "Redis" or "Valkey"
 * @param version the product's own version ("8.0.1" for Valkey 8.0.1); null when the server did not say
 * @param redisCompatible the Redis version it answers as (redis_version); null when the server did not say
 */
public record RedisVersion(String product, String version, String redisCompatible) {

    /** A server that does not say its version: its commands speak for themselves. */
    static final RedisVersion UNKNOWN = new RedisVersion("Redis", null, null);

    /** Reads the version of the server {@code redis} reaches and refuses one older than 6.2. */
    static RedisVersion require(RedisClusterCommands<String, byte[]> redis) {
        RedisVersion v = parse(redis.info("server"));
        if (v.redisCompatible != null && !v.atLeast(v.redisCompatible, 6, 2)) {
            throw new RunbusException("runbus needs Redis 6.2 or later (XAUTOCLAIM); the server is "
                    + v.redisCompatible);
        }
        return v;
    }

    public static RedisVersion parse(String info) {
        String redis = null;
        String valkey = null;
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                redis = line.substring("redis_version:".length()).trim();
            } else if (line.startsWith("valkey_version:")) {
                valkey = line.substring("valkey_version:".length()).trim();
            }
        }
        return valkey != null ? new RedisVersion("Valkey", valkey, redis)
                : redis != null ? new RedisVersion("Redis", redis, redis) : UNKNOWN;
    }

    /** Whether the server has functions (FUNCTION LOAD, FCALL): Redis 7.0 and later, so every Valkey. */
    public boolean hasFunctions() {
        return redisCompatible == null || atLeast(redisCompatible, 7, 0);
    }

    /**
     * Whether XADD takes {@code IDMP} (idempotent appends): Redis 8.6 and later; no Valkey so far (Valkey 8 says
     * redis_version 7.2.4). A server that does not say its version is taken not to.
     */
    public boolean hasIdempotentAppends() {
        return "Redis".equals(product) && redisCompatible != null && atLeast(redisCompatible, 8, 6);
    }

    /**
     * Whether XTRIM and XADD take {@code ACKED} (trim only what every group acknowledged): Redis 8.2 and later; no
     * Valkey so far.
     */
    public boolean hasAckedTrim() {
        return "Redis".equals(product) && redisCompatible != null && atLeast(redisCompatible, 8, 2);
    }

    /** Major, minor and patch of {@code version}; missing or unreadable parts are 0. */
    public static int[] numbers(String version) {
        int[] out = new int[3];
        String[] parts = version.split("\\.");
        for (int i = 0; i < out.length && i < parts.length; i++) {
            String digits = parts[i].replaceAll("[^0-9].*", "");
            out[i] = digits.isEmpty() ? 0 : Integer.parseInt(digits);
        }
        return out;
    }

    private boolean atLeast(String version, int major, int minor) {
        int[] n = numbers(version);
        return n[0] > major || n[0] == major && n[1] >= minor;
    }

    @Override
    public String toString() {
        return version == null ? "an unknown version" : product + " " + version;
    }
}
