package dev.runbus.runs;

import java.time.Instant;

/**
 * What {@link Runs#list} returns: runs matching every filter given (a null filter matches all), newest first,
 * at most {@code limit} of them, after {@code after} when it is given.
 *
 * @param createdAfter  only runs created strictly after this instant
 * @param createdBefore only runs created strictly before this instant
 * @param after         where the previous page ended ({@link RunPage#next()}), or null for the first page
 * @param limit         1 to {@link #MAX_LIMIT}
 */
public record RunQuery(RunStatus status, String userId, String sessionId, Instant createdAfter,
                       Instant createdBefore, RunPosition after, int limit) {

    public static final int DEFAULT_LIMIT = 50;
    /** The largest page: one call reads at most this many runs. */
    public static final int MAX_LIMIT = 200;

    public RunQuery {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be between 1 and " + MAX_LIMIT + ", not " + limit);
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
