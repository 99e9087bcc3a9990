package dev.runbus.server;

import dev.runbus.BusConfig;
import dev.runbus.ScriptMode;
import java.nio.file.Path;
import java.util.Optional;

/**
 * How the settings say to reach Redis beyond its URL: the password (from {@code --redis-password-file} or
 * {@code RUNBUS_REDIS_PASSWORD}, not both; else the URL's own), the CA certificates to trust for TLS
 * ({@code --redis-tls-ca}, else the JVM's), how to run the scripts ({@code --redis-scripts}) and how long a command
 * may take ({@code --redis-timeout}). The password travels as characters to the bus and is never printed:
 * an error about the file names the file, never what is in it.
 */
public final class RedisAccess {

    private RedisAccess() {
    }

    /**
     * Adds the password, the trusted CAs, how to run scripts and the command timeout, as the settings give them, to
     * {@code config}.
     */
    public static BusConfig.Builder apply(Settings s, BusConfig.Builder config) {
        password(s).ifPresent(config::redisPassword);
        config.scriptMode(scriptMode(s.get(Setting.REDIS_SCRIPTS)));
        config.commandTimeout(s.duration(Setting.REDIS_TIMEOUT));
        if (s.isSet(Setting.REDIS_TLS_CA)) {
            config.redisTlsCa(Path.of(s.get(Setting.REDIS_TLS_CA)));
        }
        return config;
    }

    private static ScriptMode scriptMode(String value) {
        for (ScriptMode m : ScriptMode.values()) {
            if (m.name().equalsIgnoreCase(value.strip())) {
                return m;
            }
        }
        throw new IllegalArgumentException("--redis-scripts must be auto, eval or functions, got '" + value + "'");
    }

    /** The password file's first line, or the password setting; empty: the URL's (if it holds one). */
    static Optional<char[]> password(Settings s) {
        return SecretSettings.read(s, Setting.REDIS_PASSWORD, Setting.REDIS_PASSWORD_FILE, "Redis")
                .map(String::toCharArray);
    }
}
