package dev.runbus.runs;

import dev.runbus.runs.internal.store.OutboxStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;

/**
 * Submits runs on the caller's own connection, inside whatever transaction it is in ({@link Runs#within}): the run row
 * is written there, and nothing else happens until that transaction ends. Its commit makes the run's trigger
 * published by a relay ({@link Runs#startSweeper()} starts one; it wakes at the commit, polls every second, and the
 * sweeper publishes what no relay did); its rollback leaves no run and
 * no trigger. No Redis call runs inside the caller's transaction. The same is open to any language on the database:
 * the schema's SQL function {@code submit_run} (docs/runs.md, "Submitting in your transaction").
 *
 * <p>Unlike {@link Runs#submit(NewRun)}, a run submitted here cannot be delayed, and carries no trace context.
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
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(scope, "scope");
        runs.checkSubmittable(request);
        try {
            OutboxStore.Submitted s = store.submit(connection, request, scope.owner().orElse(null));
            runs.countSubmitted(s.created());
            return new SubmitResult(s.runId(), s.created(), s.status());
        } catch (SQLException e) {
            throw new RunStoreException("submitting a run in the caller's transaction failed: " + e.getMessage(), e);
        }
    }
}
