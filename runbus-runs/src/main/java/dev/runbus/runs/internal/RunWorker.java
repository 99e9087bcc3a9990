package dev.runbus.runs.internal;

import dev.runbus.Delivery;
import dev.runbus.Handler;
import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Executes the run a trigger names, as a bus handler: returning acks the trigger, throwing leaves it
 * pending (and at {@code maxDeliveries} the bus dead-letters it; {@link FailedRunMarker} then fails the run).
 *
 * <ol>
 *   <li>pending|running → running, attempt + 1 — or, when the run is done, failed or unknown, return at
 *       once (the short-circuit: the trigger is acked, nothing runs);</li>
 *   <li>run the handler;</li>
 *   <li>in one transaction: replies (ON CONFLICT DO NOTHING) and done;</li>
 *   <li>(steps 1 and 3 are group-committed with the other runs in flight: see {@link RunCommits});</li>
 *   <li>return, and the bus acks.</li>
 * </ol>
 */
public final class RunWorker implements Handler {

    private static final Logger log = LoggerFactory.getLogger(RunWorker.class);

    private final RunStore store;
    private final EffectStore effects;
    private final RunCommits commits;
    private final RunHandler handler;

    public RunWorker(RunStore store, RunCommits commits, RunHandler handler) {
        this.store = store;
        this.effects = new EffectStore(store.dataSource(), store.schema());
        this.commits = commits;
        this.handler = handler;
    }

    @Override
    public void handle(Delivery delivery) throws Exception {
        Optional<UUID> runId = Triggers.runIdOf(delivery.message());
        if (runId.isEmpty()) {
            log.warn("entry {} of topic {} is not a run trigger (id '{}'); acked without work", delivery.streamId(),
                    delivery.topic(), delivery.message().id());
            return;
        }
        Optional<RunStore.Attempt> attempt = commits.startAttempt(runId.get(), delivery.streamId());
        if (attempt.isEmpty()) {
            log.debug("run {} is finished or unknown; trigger {} acked without work", runId.get(), delivery.streamId());
            return;
        }
        RunStore.Attempt a = attempt.get();
        RunContext context = new RunContext(a.runId(), a.idempotencyKey(), a.sessionId(), a.userId(), a.input(),
                a.attempt(), new StoredEffects(effects, a.runId()));
        List<Reply> replies;
        try {
            replies = handler.execute(context);
            if (replies == null) {
                throw new IllegalStateException("RunHandler returned null instead of a list of replies");
            }
        } catch (Exception failure) {
            recordFailure(a.runId(), failure);
            throw failure;
        }
        CrashPoints.reach(CrashPoints.Point.AFTER_HANDLER_BEFORE_COMMIT);
        if (!commits.complete(a.runId(), replies)) {
            log.debug("run {} was completed by another execution; its replies are kept", a.runId());
        }
        CrashPoints.reach(CrashPoints.Point.AFTER_COMMIT_BEFORE_ACK);
    }

    private void recordFailure(UUID runId, Exception failure) {
        try {
            store.recordFailure(runId, failure.getClass().getName() + ": " + failure.getMessage());
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }
}
