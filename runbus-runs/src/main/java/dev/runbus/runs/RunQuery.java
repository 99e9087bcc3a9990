package dev.runbus.runs;

import java.time.Instant;

/**
 * What {@link Runs#list} returns: runs matching every filter given (a null filter matches all), newest first,
 * at most {@code limit} of them, after {@code after} when it is given. Filters are checked here, so that none
 * that PostgreSQL would refuse reaches it (an {@link IllegalArgumentException} rather than a
 * {@link RunStoreException}).
 *
 * @param userId        only runs of this user: an id {@link NewRun} takes (at most {@link NewRun#MAX_ID_BYTES}
 *                      bytes, no NUL, no lone surrogate)
 * @param sessionId     only runs of this session, as {@code userId}
 * @param createdAfter  only runs created strictly after this instant, between {@link #EARLIEST} and
 *                      {@link #LATEST}
 * @param createdBefore only runs created strictly before this instant, in the same range
 * @param after         where the previous page ended ({@link RunPage#next()}), or null for the first page; its time in
 *                      the same range
 * @param limit         1 to {@link #MAX_LIMIT}
 */
public record RunQuery(RunStatus status, String userId, String sessionId, Instant createdAfter,
                       Instant createdBefore, RunPosition after, int limit) {

    public static final int DEFAULT_LIMIT = 50;
    /** The largest page: one call reads at most this many runs. */
    public static final int MAX_LIMIT = 200;

    /**
     * The earliest and the latest instant a filter or a position may name: the years 1 to 9999 of RFC 3339 and
     * ISO 8601's basic form, well inside what PostgreSQL's {@code timestamptz} holds (4713 BC to 294276 AD).
     */
    public static final Instant EARLIEST = Instant.parse("0001-01-01T00:00:00Z");
    public static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999999999Z");

    public RunQuery {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be between 1 and " + MAX_LIMIT + ", not " + limit);
        }
        requireId("userId", userId);
        requireId("sessionId", sessionId);
        requireInRange("createdAfter", createdAfter);
        requireInRange("createdBefore", createdBefore);
        requireInRange("after", after == null ? null : after.createdAt());
    }

    /** What is wrong with {@code id} as a user or session filter, or null when it is one a run can have. */
    public static String idProblem(String id) {
        String problem = NewRun.unstorable(id);
        if (problem != null) {
            return problem;
        }
        if (id.isEmpty()) {
            return "must not be empty";
        }
        int bytes = NewRun.utf8Length(id);
        return bytes > NewRun.MAX_ID_BYTES ? "has " + bytes + " bytes in UTF-8, more than the " + NewRun.MAX_ID_BYTES
                + " an id has" : null;
    }

    /** Whether a filter or a position may name {@code t}: between {@link #EARLIEST} and {@link #LATEST}. */
    public static boolean inRange(Instant t) {
        return !t.isBefore(EARLIEST) && !t.isAfter(LATEST);
    }

    private static void requireId(String name, String id) {
        String problem = id == null ? null : idProblem(id);
        if (problem != null) {
            throw new IllegalArgumentException(name + " " + problem);
        }
    }

    private static void requireInRange(String name, Instant t) {
        if (t != null && !inRange(t)) {
            throw new IllegalArgumentException(name + " must be between " + EARLIEST + " and " + LATEST + ", not " + t);
        }
    }

    /** The first page of every run, {@link #DEFAULT_LIMIT} long. */
    public static RunQuery newest() {
        return new RunQuery(null, null, null, null, null, null, DEFAULT_LIMIT);
    }

    public RunQuery withStatus(RunStatus s) {
        return new RunQuery(s, userId, sessionId, createdAfter, createdBefore, after, limit);
    }

    public RunQuery withUser(String u) {
        return new RunQuery(status, u, sessionId, createdAfter, createdBefore, after, limit);
    }

    public RunQuery withSession(String s) {
        return new RunQuery(status, userId, s, createdAfter, createdBefore, after, limit);
    }

    public RunQuery createdBetween(Instant afterInstant, Instant beforeInstant) {
        return new RunQuery(status, userId, sessionId, afterInstant, beforeInstant, after, limit);
    }

    /** The page after {@code position}: pass {@link RunPage#next()} of the previous page. */
    public RunQuery after(RunPosition position) {
        return new RunQuery(status, userId, sessionId, createdAfter, createdBefore, position, limit);
    }

    public RunQuery withLimit(int n) {
        return new RunQuery(status, userId, sessionId, createdAfter, createdBefore, after, n);
    }
}
