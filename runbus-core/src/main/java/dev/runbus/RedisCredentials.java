package dev.runbus;

import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * A Redis user and password given apart from the Redis URL, so that the URL (which is printed, logged and put
 * in settings) need not hold a secret. The password is kept as a copy of the characters given and never
 * appears in {@link #toString()} or in an exception's message. Without a user Redis checks the password
 * against its {@code default} user ({@code AUTH password}); with one, against that ACL user
 * ({@code AUTH user password}).
 */
public final class RedisCredentials {

    private final String user;
    private final char[] password;

    private RedisCredentials(String user, char[] password) {
        Objects.requireNonNull(password, "password");
        if (password.length == 0) {
            throw new IllegalArgumentException("the Redis password is empty");
        }
        if (user != null && (user.isEmpty() || user.chars().anyMatch(Character::isWhitespace))) {
            throw new IllegalArgumentException("the Redis user name must be non-empty, without whitespace: '"
                    + user + "'");
        }
        this.user = user;
        this.password = password.clone();
    }

    /** The password of Redis's {@code default} user (or of a server with {@code requirepass}). */
    public static RedisCredentials password(char[] password) {
        return new RedisCredentials(null, password);
    }

    /** An ACL user and its password. */
    public static RedisCredentials of(String user, char[] password) {
        return new RedisCredentials(Objects.requireNonNull(user, "user"), password);
    }

    /** The ACL user; empty for the {@code default} user. */
    public Optional<String> user() {
        return Optional.ofNullable(user);
    }

    /** A copy of the password; the caller may clear it when done. */
    public char[] password() {
        return password.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RedisCredentials c && Objects.equals(user, c.user) && Arrays.equals(password, c.password);
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(user); // the password stays out of anything derived from it
    }

    @Override
    public String toString() {
        return "RedisCredentials[user=" + (user == null ? "default" : user) + ", password=****]";
    }
}
