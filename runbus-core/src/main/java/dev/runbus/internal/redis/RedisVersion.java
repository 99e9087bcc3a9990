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

    /**
     * System property: the newest Redis version whose commands the bus may use, e.g. {@code 8.0}; unset, it uses what
     * the server has. A server newer than this is treated as this version for every choice made by version
     * (functions from 7.0, {@code XTRIM … ACKED} from 8.2, {@code XADD … IDMP} from 8.6), so the older path runs on a
     * newer server: to hold a feature back through a rolling upgrade, or to test the older path there.
     */
    public static final String COMMANDS_UP_TO = "runbus.redis.commandsUpTo";

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

    /** The version {@code INFO server} gives, capped by {@value #COMMANDS_UP_TO} when that is set. */
    public static RedisVersion parse(String info) {
        return parse(info, System.getProperty(COMMANDS_UP_TO));
    }

    /**
     * The version {@code INFO server} gives; a {@code commandsUpTo} older than the server's Redis version takes its
     * place as the version the server answers as (the product's own version stays, for messages); a server that
     * does not say its version stays unknown.
     *
     * @param commandsUpTo a version such as "8.0", or null or blank for no cap
     * @throws RunbusException when {@code commandsUpTo} is not a version
     */
    static RedisVersion parse(String info, String commandsUpTo) {
        RedisVersion v = parseUncapped(info);
        if (commandsUpTo == null || commandsUpTo.isBlank()) {
            return v;
        }
        if (!commandsUpTo.strip().matches("\\d+(\\.\\d+){0,2}")) {
            throw new RunbusException(COMMANDS_UP_TO + " must be a Redis version such as 8.0, not '"
                    + commandsUpTo + "'");
        }
        String cap = commandsUpTo.strip();
        boolean newer = v.redisCompatible != null && compare(numbers(v.redisCompatible), numbers(cap)) > 0;
        return newer ? new RedisVersion(v.product, v.version, cap) : v;
    }

    private static RedisVersion parseUncapped(String info) {
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

    private static int compare(int[] a, int[] b) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] != b[i]) {
                return Integer.compare(a[i], b[i]);
            }
        }
        return 0;
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
