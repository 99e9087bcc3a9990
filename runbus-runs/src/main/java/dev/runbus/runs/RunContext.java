package dev.runbus.runs;

import java.util.UUID;

/**
 * What a {@link RunHandler} gets for one attempt.
 *
 * @param runId          the run's id
 * @param idempotencyKey the run's idempotency key; pass it (or an effect's key) to external systems
 * @param attempt        1 on the first attempt, counted in PostgreSQL
 * @param effects        records side effects so that each is initiated at most once per run
 * @param progress       where {@link #progress(int, String)} reports ({@link RunProgress#NONE} in a context made by
 *                       hand)
 */
public record RunContext(UUID runId, String idempotencyKey, String sessionId, String userId, String input,
                         int attempt, Effects effects, RunProgress progress) {

    /** A context whose progress reports go nowhere: for a handler's unit test. */
    public RunContext(UUID runId, String idempotencyKey, String sessionId, String userId, String input, int attempt,
                      Effects effects) {
        this(runId, idempotencyKey, sessionId, userId, input, attempt, effects, RunProgress.NONE);
    }

    /**
     * Reports how far the handler got: the latest report of the run is written at most once a second (never
     * waiting here), shown in {@link Run#progress()}, {@code GET /v1/runs/{id}} and the dashboard while the run
     * runs and after.
     *
     * @param percent 0 to 100
     * @param details what is going on, or null
     * @throws IllegalArgumentException when {@code percent} is outside 0 to 100
     */
    public void progress(int percent, String details) {
        progress.report(percent, details);
    }
}
