package dev.runbus.runs.internal.store;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Derived idempotency keys and body hashes: SHA-256 over length-prefixed parts, so parts cannot run together. */
public final class IdempotencyKeys {

    private IdempotencyKeys() {
    }

    /** The key of a submission without one: session, user, input and the epoch second it arrived in. */
    public static String derive(String sessionId, String userId, String input, long epochSecond) {
        return "derived:" + sha256(sessionId, userId, input, Long.toString(epochSecond));
    }

    /** {@link #derive(String, String, String, long)} of a run with a flow key ({@code null}: none, the same key). */
    public static String derive(String sessionId, String userId, String input, String flowKey, long epochSecond) {
        return flowKey == null ? derive(sessionId, userId, input, epochSecond)
                : "derived:" + sha256(sessionId, userId, input, Long.toString(epochSecond), "flow", flowKey);
    }

    /**
     * The key stored for {@code key} (given or derived) in an owner's scope: the owner and the key hashed together,
     * so that no two owners, and no owner and a global key, ever share a stored key.
     */
    public static String scoped(String owner, String key) {
        return "scoped:" + sha256(owner, key);
    }

    /** What must be equal for two submissions with one key to be the same submission. */
    public static String bodyHash(String sessionId, String userId, String input) {
        return sha256(sessionId, userId, input);
    }

    /**
     * {@link #bodyHash(String, String, String)} of a run with a flow key ({@code null}: none, the same hash as
     * without one): a key reused with another flow key is a different body.
     */
    public static String bodyHash(String sessionId, String userId, String input, String flowKey) {
        return flowKey == null ? sha256(sessionId, userId, input) : sha256(sessionId, userId, input, "flow", flowKey);
    }

    /**
     * What the keys and hashes take as a run's flow key: its flow key, with its priority after a NUL (which no flow
     * key holds) when that is not the default, so that runs without a priority keep their keys and hashes.
     */
    public static String flowPart(String flowKey, int priority) {
        return flowKey == null || priority == dev.runbus.Message.DEFAULT_PRIORITY ? flowKey
                : flowKey + "\0priority=" + priority;
    }

    /**
     * {@link #flowPart(String, int)} with the run's flow sub-key after another NUL when it has one, so that runs
     * without a sub-key keep their keys and hashes.
     */
    public static String flowPart(String flowKey, int priority, String flowSubKey) {
        String part = flowPart(flowKey, priority);
        return flowSubKey == null ? part : part + "\0sub=" + flowSubKey;
    }

    /** The SHA-256 of {@code text}'s UTF-8 bytes, in hex. */
    public static String sha256Hex(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JVM", e);
        }
    }

    static String sha256(String... parts) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (String p : parts) {
                byte[] b = p.getBytes(StandardCharsets.UTF_8);
                md.update(Integer.toString(b.length).getBytes(StandardCharsets.UTF_8));
                md.update((byte) ':');
                md.update(b);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JVM", e);
        }
    }
}
