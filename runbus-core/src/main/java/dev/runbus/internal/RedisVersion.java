package dev.runbus.internal;

import dev.runbus.RunbusException;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;

/** The bus needs Redis 6.2 or later: XAUTOCLAIM and XPENDING's IDLE filter arrived in 6.2. */
final class RedisVersion {

    private RedisVersion() {
    }

    static void require(RedisClusterCommands<String, byte[]> redis) {
        String info = redis.info("server");
        String version = null;
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                version = line.substring("redis_version:".length()).trim();
            }
        }
        if (version == null) {
            return; // a Redis-compatible server that does not say; let the commands speak for themselves
        }
        String[] parts = version.split("\\.");
        int major = Integer.parseInt(parts[0]);
        int minor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
        if (major < 6 || major == 6 && minor < 2) {
            throw new RunbusException("runbus needs Redis 6.2 or later (XAUTOCLAIM); the server is " + version);
        }
    }
}
