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
 * @param cancellation   whether the run's cancel was asked for ({@link RunCancellation#NONE} in a context made by
 *                       hand); see {@link #isCancelRequested()}
 */
public record RunContext(UUID runId, String idempotencyKey, String sessionId, String userId, String input,
                         int attempt, Effects effects, RunProgress progress, RunCancellation cancellation) {

    /** A context that is never cancelled: for a handler's unit test. */
    public RunContext(UUID runId, String idempotencyKey, String sessionId, String userId, String input, int attempt,
                      Effects effects, RunProgress progress) {
        this(runId, idempotencyKey, sessionId, userId, input, attempt, effects, progress, RunCancellation.NONE);
    }

    /** A context whose progress reports go nowhere: for a handler's unit test. */
    public RunContext(UUID runId, String idempotencyKey, String sessionId, String userId, String input, int attempt,
                      Effects effects) {
        this(runId, idempotencyKey, sessionId, userId, input, attempt, effects, RunProgress.NONE,
                RunCancellation.NONE);
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

    /**
     * Whether the handler is asked to stop: the run's cancel was asked for ({@link Runs#cancel}), or this attempt
     * ran past its timeout ({@link NewRun#timeout()}). A handler that checks it between steps stops early; if it does
     * not, its thread is interrupted {@code RunsConfig.cancelGrace} later. After a cancel, however the attempt ends
     * (replies, an exception, the interrupt), the run ends cancelled and is never retried; after a timeout the
     * attempt fails and is retried under the retry policy.
     */
    public boolean isCancelRequested() {
        return cancellation.isRequested();
    }

    /**
     * Throws {@link RunCancelledException} when the run's cancel was asked for: the check between steps for a
     * handler that stops by throwing.
     */
    public void throwIfCancelRequested() {
        if (cancellation.isRequested()) {
            throw new RunCancelledException(runId);
        }
    }

    /**
     * Runs {@code callback} once when the run's cancel is asked for, on the worker's watch thread (keep it short:
     * close a connection, cancel a future), or at once if it was asked for already.
     */
    public void onCancel(Runnable callback) {
        cancellation.onRequest(callback);
    }
}
