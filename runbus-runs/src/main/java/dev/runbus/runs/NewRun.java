package dev.runbus.runs;

import java.util.Objects;

/**
 * A run to submit.
 *
 * @param sessionId      the conversation or session it belongs to; required
 * @param userId         who asked; required
 * @param input          the input, typically JSON text; required
 * @param idempotencyKey minted once by the client and reused on its retries; {@code null} lets the server
 *                       derive one from session, user, input and the current epoch second, which absorbs
 *                       a double click but not a retry a minute later
 */
public record NewRun(String sessionId, String userId, String input, String idempotencyKey) {

    public static final int MAX_KEY_LENGTH = 200;

    /**
     * The longest {@code userId} of a run in per-user order ({@link RunsConfig#ordered()}): its trigger is
     * published with the user id as the message key, and the bus takes keys of 1 to 1000 characters
     * ({@code Message.withKey}; Java characters, UTF-16 units). {@link Runs#submit} refuses a longer one.
     * Unordered runs' triggers carry no key, so their user ids have no such limit.
     */
    public static final int MAX_ORDERED_USER_ID_LENGTH = 1000;

    public NewRun {
        requireText("sessionId", sessionId);
        requireText("userId", userId);
        Objects.requireNonNull(input, "input");
        if (idempotencyKey != null && (idempotencyKey.isBlank() || idempotencyKey.length() > MAX_KEY_LENGTH)) {
            throw new IllegalArgumentException("idempotencyKey must have 1 to " + MAX_KEY_LENGTH
                    + " non-blank characters");
        }
    }

    public static NewRun of(String sessionId, String userId, String input) {
        return new NewRun(sessionId, userId, input, null);
    }

    public NewRun withKey(String key) {
        return new NewRun(sessionId, userId, input, key);
    }

    private static void requireText(String name, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(name + " is required");
        }
    }
}
