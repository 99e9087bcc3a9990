package dev.runbus.runs;

import java.util.Objects;

/**
 * A run to submit. Its texts are what PostgreSQL stores, so each is refused here ({@link InvalidRunException}
 * naming the component) when PostgreSQL would refuse or change it: a NUL character, which a text column cannot
 * hold, and a lone UTF-16 surrogate (half of a pair), which has no UTF-8 form and would be stored as {@code ?},
 * so that two different ids became one.
 *
 * @param sessionId      the conversation or session it belongs to; required, at most {@link #MAX_ID_BYTES} bytes
 * @param userId         who asked; required, at most {@link #MAX_ID_BYTES} bytes
 * @param input          the input, typically JSON text; required
 * @param idempotencyKey minted once by the client and reused on its retries; {@code null} lets the server
 *                       derive one from session, user, input and the current epoch second, which absorbs
 *                       a double click but not a retry a minute later
 * @param flowKey        the flow key of the run's trigger ({@code null}: none), typically the tenant: a worker whose
 *                       {@link RunsConfig#workerOptions() options} set a flow cap, rate or topic cap runs the runs of
 *                       one flow key within them (docs/flow-control.md). Non-empty, at most
 *                       {@value dev.runbus.Message#MAX_FLOW_KEY_BYTES} UTF-8 bytes, no NUL; unordered runs only
 * @param priority       the priority of the run's trigger among its flow key's waiting runs, 0 to 9 (9 the most
 *                       urgent; default {@value dev.runbus.Message#DEFAULT_PRIORITY}; docs/flow-control.md,
 *                       "Priorities"). Another than the default needs a flow key
 * @param flowSubKey     the flow sub-key of the run's trigger ({@code null}: none), e.g. the tenant's conversation:
 *                       a flow key's waiting runs are shared fairly among its sub-keys, so that a few of a tenant's
 *                       conversations with many runs each do not hold back its others (docs/flow-control.md,
 *                       "Sub-keys"). As a flow key: non-empty, at most {@value dev.runbus.Message#MAX_FLOW_KEY_BYTES}
 *                       UTF-8 bytes, no NUL; it needs a flow key
 * @param expireAfter    how long after its submission (by PostgreSQL's clock) the run may still start ({@code null}:
 *                       for ever). A run not started by then is never started: it ends {@link RunStatus#EXPIRED},
 *                       checked by every trigger of it and by the sweeper. 1 ms to {@link #MAX_DURATION}; longer than
 *                       a delay it is submitted with. Not part of the body its idempotency key compares
 * @param timeout        how long one attempt's handler may run ({@code null}: {@link RunsConfig#executionTimeout()}).
 *                       Then it is told as of a cancel ({@link RunContext#isCancelRequested()}) and, after
 *                       {@link RunsConfig#cancelGrace()}, interrupted; the attempt counts as failed, retried under the
 *                       retry policy. 1 ms to {@link #MAX_DURATION}. Not part of the body its idempotency key compares
 */
public record NewRun(String sessionId, String userId, String input, String idempotencyKey, String flowKey,
                     int priority, String flowSubKey, java.time.Duration expireAfter, java.time.Duration timeout) {

    /** The longest {@code expireAfter} and {@code timeout}: a month, longer is more likely a unit mistake. */
    public static final java.time.Duration MAX_DURATION = java.time.Duration.ofDays(30);

    public static final int MAX_KEY_LENGTH = 200;

    /**
     * The longest {@code userId} of a run in per-user order ({@link RunsConfig#ordered()}): its trigger is
     * published with the user id as the message key, and the bus takes keys of 1 to 1000 characters
     * ({@code Message.withKey}; Java characters, UTF-16 units). {@link Runs#submit} refuses a longer one.
     * Unordered runs' triggers carry no key, so their user ids have no such limit.
     */
    public static final int MAX_ORDERED_USER_ID_LENGTH = 1000;

    /**
     * The most bytes a {@code sessionId} or {@code userId} has in UTF-8: 2000 ASCII characters, 500 of four bytes.
     * Each is indexed with the creation time for the runs listing ({@link Runs#list}), and an entry of a PostgreSQL
     * btree index holds at most about 2,700 bytes: a longer id of incompressible text could never be inserted.
     */
    public static final int MAX_ID_BYTES = 2000;

    public NewRun {
        requireId("sessionId", sessionId);
        requireId("userId", userId);
        Objects.requireNonNull(input, "input");
        requireStorable("input", input);
        if (idempotencyKey != null && (idempotencyKey.isBlank() || idempotencyKey.length() > MAX_KEY_LENGTH)) {
            throw new IllegalArgumentException("idempotencyKey must have 1 to " + MAX_KEY_LENGTH
                    + " non-blank characters");
        }
        if (idempotencyKey != null) {
            requireStorable("idempotencyKey", idempotencyKey);
        }
        if (flowKey != null) {
            requireStorable("flowKey", flowKey);
            try {
                dev.runbus.Message.checkFlowKey(flowKey);
            } catch (IllegalArgumentException e) {
                throw new InvalidRunException("flowKey", e.getMessage());
            }
        }
        if (priority < dev.runbus.Message.MIN_PRIORITY || priority > dev.runbus.Message.MAX_PRIORITY) {
            throw new InvalidRunException("priority", "is " + dev.runbus.Message.MIN_PRIORITY + " to "
                    + dev.runbus.Message.MAX_PRIORITY + ", not " + priority);
        }
        if (priority != dev.runbus.Message.DEFAULT_PRIORITY && flowKey == null) {
            throw new InvalidRunException("priority", "orders the runs waiting for their flow key's slots: give the "
                    + "run a flow key too");
        }
        requireDuration("expireAfter", expireAfter);
        requireDuration("timeout", timeout);
        if (flowSubKey != null) {
            if (flowKey == null) {
                throw new InvalidRunException("flowSubKey", "shares its flow key's waiting runs fairly among their "
                        + "sub-keys: give the run a flow key too");
            }
            requireStorable("flowSubKey", flowSubKey);
            try {
                dev.runbus.Message.checkFlowKey(flowSubKey);
            } catch (IllegalArgumentException e) {
                throw new InvalidRunException("flowSubKey", e.getMessage().replace("a flow key", "a flow sub-key"));
            }
        }
    }

    /** A run without a flow key. */
    public NewRun(String sessionId, String userId, String input, String idempotencyKey) {
        this(sessionId, userId, input, idempotencyKey, null);
    }

    /** A run with the default priority. */
    public NewRun(String sessionId, String userId, String input, String idempotencyKey, String flowKey) {
        this(sessionId, userId, input, idempotencyKey, flowKey, dev.runbus.Message.DEFAULT_PRIORITY);
    }

    /** A run without a flow sub-key. */
    public NewRun(String sessionId, String userId, String input, String idempotencyKey, String flowKey,
                  int priority) {
        this(sessionId, userId, input, idempotencyKey, flowKey, priority, null);
    }

    /** A run without an expiry or a timeout of its own. */
    public NewRun(String sessionId, String userId, String input, String idempotencyKey, String flowKey,
                  int priority, String flowSubKey) {
        this(sessionId, userId, input, idempotencyKey, flowKey, priority, flowSubKey, null, null);
    }

    public static NewRun of(String sessionId, String userId, String input) {
        return new NewRun(sessionId, userId, input, null);
    }

    public NewRun withKey(String key) {
        return new NewRun(sessionId, userId, input, key, flowKey, priority, flowSubKey, expireAfter, timeout);
    }

    /** This run with {@code flowKey} as the flow key of its trigger (see {@link #flowKey()}). */
    public NewRun withFlowKey(String flowKey) {
        return new NewRun(sessionId, userId, input, idempotencyKey, flowKey, priority, flowSubKey, expireAfter,
                timeout);
    }

    /** This run with {@code priority} (see {@link #priority()}); it needs a flow key. */
    public NewRun withPriority(int priority) {
        return new NewRun(sessionId, userId, input, idempotencyKey, flowKey, priority, flowSubKey, expireAfter,
                timeout);
    }

    /** This run with {@code flowSubKey} (see {@link #flowSubKey()}); it needs a flow key. */
    public NewRun withFlowSubKey(String flowSubKey) {
        return new NewRun(sessionId, userId, input, idempotencyKey, flowKey, priority, flowSubKey, expireAfter,
                timeout);
    }

    /** This run, expiring {@code expireAfter} after its submission if not started (see {@link #expireAfter()}). */
    public NewRun withExpireAfter(java.time.Duration expireAfter) {
        return new NewRun(sessionId, userId, input, idempotencyKey, flowKey, priority, flowSubKey, expireAfter,
                timeout);
    }

    /** This run, each attempt of which may run {@code timeout} (see {@link #timeout()}). */
    public NewRun withTimeout(java.time.Duration timeout) {
        return new NewRun(sessionId, userId, input, idempotencyKey, flowKey, priority, flowSubKey, expireAfter,
                timeout);
    }

    private static void requireDuration(String name, java.time.Duration d) {
        if (d != null && (d.toMillis() < 1 || d.compareTo(MAX_DURATION) > 0)) {
            throw new InvalidRunException(name, "is 1 ms to " + MAX_DURATION.toDays() + " days, not " + d);
        }
    }

    private static void requireId(String name, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(name + " is required");
        }
        requireStorable(name, value);
        int bytes = utf8Length(value);
        if (bytes > MAX_ID_BYTES) {
            throw new InvalidRunException(name, "has " + bytes + " bytes in UTF-8, more than the " + MAX_ID_BYTES
                    + " allowed");
        }
    }

    /**
     * What {@link InvalidRunException#problem()} says of {@code value}, or null when PostgreSQL stores it as it is:
     * no NUL, no lone surrogate. Also for filters that are compared with stored texts ({@link RunQuery}).
     */
    static String unstorable(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\u0000') {
                return "must not contain the NUL character";
            }
            if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return "must not contain a lone UTF-16 surrogate (\\u" + Integer.toHexString(c)
                        + " at character " + i + "): it has no UTF-8 form";
            }
        }
        return null;
    }

    /** {@code value.getBytes(UTF_8).length}, without the copy; valid only for text without lone surrogates. */
    static int utf8Length(String value) {
        int n = 0;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c)) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    private static void requireStorable(String name, String value) {
        String problem = unstorable(value);
        if (problem != null) {
            throw new InvalidRunException(name, problem);
        }
    }
}
