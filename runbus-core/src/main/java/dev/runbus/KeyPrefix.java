package dev.runbus;

import dev.runbus.internal.admin.PrefixDeletion;

/** Operations on all the keys under one key prefix, for tools (the demo cleans up its own with it). */
public final class KeyPrefix {

    /**
     * Characters a prefix must not hold. Braces and whitespace break key tags and parsing; the rest are
     * SCAN's and ACL's glob characters and the separator: {@code deleteAll} scans {@code prefix:*} and an ACL grants
     * {@code ~prefix:*}, so {@code a*} would reach prefix {@code ab}'s keys, and {@code a:b}'s pattern lies inside
     * prefix {@code a}'s.
     */
    private static final String FORBIDDEN = "{}*?[]\\:";

    private KeyPrefix() {
    }

    /**
     * Returns {@code prefix} if it can be a key prefix: non-empty, without whitespace, braces, the glob
     * characters {@code * ? [ ] \} or {@code :}.
     *
     * @throws IllegalArgumentException naming the prefix and the first character it must not hold
     */
    public static String check(String prefix) {
        if (prefix == null || prefix.isEmpty()) {
            throw new IllegalArgumentException("keyPrefix must not be empty");
        }
        for (int i = 0; i < prefix.length(); i++) {
            char c = prefix.charAt(i);
            if (Character.isWhitespace(c) || FORBIDDEN.indexOf(c) >= 0) {
                throw new IllegalArgumentException("keyPrefix '" + prefix + "' must not contain "
                        + (Character.isWhitespace(c) ? "whitespace" : "'" + c + "'") + ": a key prefix holds no"
                        + " whitespace, braces, glob characters (* ? [ ] \\) or ':', whose key patterns (prefix:*)"
                        + " would reach the keys of other prefixes");
            }
        }
        return prefix;
    }

    /**
     * Deletes every key under {@code prefix} ({@code prefix:*}) on the Redis the URL names: one server, the
     * Sentinels' master, or every master of a cluster. Returns how many were deleted.
     *
     * @throws IllegalArgumentException if the URL is not one runbus reads, or the prefix not one ({@link #check})
     * @throws RunbusException if Redis cannot be reached
     */
    public static long deleteAll(String redisUrl, String prefix) {
        check(prefix);
        return PrefixDeletion.deleteAll(redisUrl, prefix);
    }

    /**
     * Deletes every key under {@code config}'s key prefix, reaching Redis as a bus with that configuration would:
     * its URL, the credentials given apart from it, its trusted CAs.
     *
     * @throws RunbusException if Redis cannot be reached
     */
    public static long deleteAll(BusConfig config) {
        return PrefixDeletion.deleteAll(config);
    }
}
