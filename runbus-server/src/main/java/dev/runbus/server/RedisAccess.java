package dev.runbus.server;

import dev.runbus.BusConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * How the settings say to reach Redis beyond its URL: the password (from {@code --redis-password-file}, else
 * {@code RUNBUS_REDIS_PASSWORD}, else the URL's own) and the CA certificates to trust for TLS
 * ({@code --redis-tls-ca}, else the JVM's). The password travels as characters to the bus and is never printed:
 * an error about the file names the file, never what is in it.
 */
final class RedisAccess {

    private RedisAccess() {
    }

    /** Adds the password and the trusted CAs the settings give to {@code config}. */
    static BusConfig.Builder apply(Settings s, BusConfig.Builder config) {
        password(s).ifPresent(config::redisPassword);
        if (s.isSet(Setting.REDIS_TLS_CA)) {
            config.redisTlsCa(Path.of(s.get(Setting.REDIS_TLS_CA)));
        }
        return config;
    }

    /** The password file's first line, else the password setting; empty: the URL's (if it holds one). */
    static Optional<char[]> password(Settings s) {
        if (s.isSet(Setting.REDIS_PASSWORD_FILE)) {
            return Optional.of(firstLine(Path.of(s.get(Setting.REDIS_PASSWORD_FILE)), "--redis-password-file"));
        }
        if (s.isSet(Setting.REDIS_PASSWORD)) {
            return Optional.of(s.get(Setting.REDIS_PASSWORD).toCharArray());
        }
        return Optional.empty();
    }

    /**
     * The first line of a secret file, without its line end: a file written with {@code echo} ends in a newline
     * that is not part of the secret. Whatever follows the first line is ignored.
     *
     * @throws IllegalArgumentException naming the file (never its content) if it cannot be read or its first line
     *                                  is empty
     */
    static char[] firstLine(Path file, String option) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException | SecurityException e) {
            throw new IllegalArgumentException(option + ": cannot read " + file.toAbsolutePath() + " ("
                    + e.getClass().getSimpleName() + ")");
        }
        int end = text.indexOf('\n');
        String line = end < 0 ? text : text.substring(0, end);
        if (line.endsWith("\r")) {
            line = line.substring(0, line.length() - 1);
        }
        if (line.isEmpty()) {
            throw new IllegalArgumentException(option + ": the first line of " + file.toAbsolutePath()
                    + " is empty; it must hold the password");
        }
        return line.toCharArray();
    }
}
