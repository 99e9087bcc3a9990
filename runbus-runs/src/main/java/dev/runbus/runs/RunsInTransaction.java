package dev.runbus.runs;

import dev.runbus.runs.internal.store.OutboxStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;

/**
 * Submits runs on the caller's own connection, inside whatever transaction it is in ({@link Runs#within}): the run row
 * is written there, and nothing else happens until that transaction ends. Its commit makes the run's trigger
 * published by a relay ({@link Runs#startSweeper()} starts one; it wakes at the commit, polls every second, and the
 * sweeper publishes what no relay did); its rollback leaves no run and
 * no trigger. No Redis call runs inside the caller's transaction. The same is open to any language on the database:
 * the schema's SQL function {@code submit_run} (docs/runs.md, "Submitting in your transaction").
 *
 * <p>A run submitted here may be delayed ({@link #submit(NewRun, Duration)}): the relay then schedules its trigger in
 * the bus's delay set, due that long after the run's creation by PostgreSQL's clock. Unlike
 * {@link Runs#submit(NewRun)}, its trigger carries no trace context.
 */
public final class RunsInTransaction {

    private final Connection connection;
    private final Runs runs;
    private final OutboxStore store;

    RunsInTransaction(Connection connection, Runs runs, OutboxStore store) {
        this.connection = Objects.requireNonNull(connection, "connection");
        this.runs = runs;
        this.store = store;
    }

    /**
     * Writes the run in the caller's transaction, or finds the one its idempotency key already names (committed, or
     * written earlier in this transaction). Keys are global ({@link KeyScope#GLOBAL}).
     *
     * @throws IdempotencyConflictException when the key names a run with another session, user, input or flow
     * @throws InvalidRunException          as {@link Runs#submit(NewRun)} refuses a run
     * @throws RunStoreException            when PostgreSQL fails: the caller's transaction is then to be rolled back
     */
    public SubmitResult submit(NewRun request) {
        return submit(request, KeyScope.GLOBAL);
    }

    /** {@link #submit(NewRun)} with the key compared in {@code scope} ({@link Runs#submit(NewRun, KeyScope)}). */
    public SubmitResult submit(NewRun request, KeyScope scope) {
        return submit(request, scope, Duration.ZERO);
    }

    /**
     * {@link #submit(NewRun)} of a run that is due {@code delay} after its creation ({@link Runs#submit(NewRun,
     * Duration)}): committed, its trigger is scheduled by the relay in the bus's delay set. Not in per-user order.
     */
    public SubmitResult submit(NewRun request, Duration delay) {
        return submit(request, KeyScope.GLOBAL, delay);
    }

    /** {@link #submit(NewRun, KeyScope)} and {@link #submit(NewRun, Duration)} together. */
    public SubmitResult submit(NewRun request, KeyScope scope, Duration delay) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(delay, "delay");
        runs.checkDelay(delay);
        Runs.checkExpiry(request, delay);
        runs.checkSubmittable(request);
        try {
            OutboxStore.Submitted s = store.submit(connection, request, scope.owner().orElse(null), delay);
            runs.countSubmitted(s.created());
            return new SubmitResult(s.runId(), s.created(), s.status());
        } catch (SQLException e) {
            throw new RunStoreException("submitting a run in the caller's transaction failed: " + e.getMessage(), e);
        }
    }
}
