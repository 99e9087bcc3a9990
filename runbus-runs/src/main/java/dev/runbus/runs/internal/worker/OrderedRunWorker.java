package dev.runbus.runs.internal.worker;

import dev.runbus.Bus;
import dev.runbus.Delivery;
import dev.runbus.Handler;
import dev.runbus.runs.Reply;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.RunTimedOutException;
import dev.runbus.runs.internal.store.EffectStore;
import dev.runbus.runs.internal.store.RunStore;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Executes runs in per-user order, as the handler of an ordered subscription: the bus hands it one trigger of a
 * partition at a time, and {@link OrderedAttempts} starts the run only when every earlier-submitted run of its
 * user is finished (done, failed or cancelled). PostgreSQL decides, not the stream: a trigger the sweeper republished (or a replay)
 * lands behind the triggers of later runs, so a trigger can arrive for a run whose predecessor is unfinished.
 * What happens then depends on the predecessor, the blocker:
 *
 * <ul>
 *   <li><b>pending</b> (or running without a stream entry: the sweeper republished it): its trigger is behind
 *       this one, or lost. Waiting here would hold the partition while that trigger waits behind it, until this
 *       run's trigger were dead-lettered. Instead a fresh trigger for the blocker and then one for this run are
 *       published (keyed by the user, so both land behind, in that order) and this trigger is acknowledged. No
 *       attempt is counted. This cannot spin: the blocker is the earliest unfinished run of the user, so its
 *       fresh trigger starts it (or defers it behind an even earlier one, of which there are finitely many).</li>
 *   <li><b>running</b> on an entry it still names: its attempt is live (an owner that lost its lease and is
 *       still finishing, or a last attempt its worker could not fail, whose dead letter is being marked failed
 *       right now). That resolves by
 *       itself, so this trigger fails and the bus retries it in place after the runs' retry delay: the back-off
 *       is the bus's, nothing spins. Waiting must not spend this run's poison budget: on its last allowed
 *       attempt ({@code Delivery.attempt() == maxDeliveries}) the trigger is republished and acknowledged
 *       instead of failed, so it is never dead-lettered for waiting and the wait goes on with a fresh budget.
 *       (Had it been dead-lettered anyway, the run would not be failed: a dead letter fails only the run whose
 *       current attempt it is, and this run has none; the sweeper would republish it.) And once the blocker
 *       finishes, the run does not start on the worn trigger either: a trigger at a later attempt than its run
 *       has had attempts ({@link OrderedAttempts.Worn}) is published afresh and acknowledged, so the run's own
 *       failures get all {@code maxDeliveries} deliveries before it is dead-lettered and failed.</li>
 * </ul>
 *
 * A run that starts executes as in {@link RunWorker}: handler, then replies and done in one group-committed
 * transaction, then the ack; a failing handler leaves the trigger to the bus's retry and dead-letter rules, and
 * records when the next attempt is due, or, on the trigger's last allowed delivery, fails the run before the call
 * returns (so the user's next run need not wait for the dead-letter listener). A run that already had {@code maxDeliveries} attempts by PostgreSQL's
 * count is failed instead of started ({@link OrderedAttempts.GaveUp}). A retry delivered before the run's
 * {@code next_attempt_at} (its partition changed owner during the backoff) waits in the handler until it is due
 * ({@link OrderedAttempts.NotDue}).
 */
public final class OrderedRunWorker implements Handler {

    private static final Logger log = LoggerFactory.getLogger(OrderedRunWorker.class);

    /** Thrown to have the bus retry a trigger whose run waits for a live attempt of an earlier run. */
    static final class WaitingForEarlierRun extends Exception {
        WaitingForEarlierRun(OrderedAttempts.Blocked b) {
            super("run " + b.runId() + " waits for run " + b.blocker() + " of user " + b.userId()
                    + ", submitted before it and still running", null, false, false);
        }
    }

    private final OrderedAttempts attempts;
    private final RunFailures failures;
    private final EffectStore effects;
    private final ProgressWrites progress;
    private final RunCommits commits;
    private final RunHandler handler;
    private final Bus bus;
    private final String topic;
    private final int maxDeliveries;
    private final RetrySchedule retries;
    private final HandlerWatch watch;

    public OrderedRunWorker(RunStore store, RunFailures failures, RunCommits commits, RunHandler handler, Bus bus,
                            String topic, int maxDeliveries, RetrySchedule retries) {
        this(store, failures, commits, handler, bus, topic, maxDeliveries, retries, null, HandlerWatch.idle());
    }

    /**
     * {@code progress}: where the handlers' progress reports go (null: nowhere); {@code watch}: what tells them of
     * their run's cancel.
     */
    public OrderedRunWorker(RunStore store, RunFailures failures, RunCommits commits, RunHandler handler, Bus bus,
                            String topic, int maxDeliveries, RetrySchedule retries, ProgressWrites progress,
                            HandlerWatch watch) {
        this.progress = progress;
        this.watch = watch;
        this.attempts = new OrderedAttempts(store.dataSource(), store.schema(), maxDeliveries);
        this.failures = failures;
        this.effects = new EffectStore(store.dataSource(), store.schema());
        this.commits = commits;
        this.handler = handler;
        this.bus = bus;
        this.topic = topic;
        this.maxDeliveries = maxDeliveries;
        this.retries = retries;
    }

    @Override
    public void handle(Delivery d) throws Exception {
        Optional<UUID> runId = Triggers.runIdOf(d.message());
        if (runId.isEmpty()) {
            log.warn("entry {} of topic {} is not a run trigger (id '{}'); acked without work", d.streamId(),
                    d.topic(), d.message().id());
            return;
        }
        OrderedAttempts.Start start = attempts.start(runId.get(), d.streamId(), d.attempt());
        while (start instanceof OrderedAttempts.NotDue n) {
            awaitRetry(n);
            start = attempts.start(runId.get(), d.streamId(), d.attempt());
        }
        if (start instanceof OrderedAttempts.Started s) {
            execute(s.attempt(), d);
        } else if (start instanceof OrderedAttempts.GaveUp g) {
            log.warn("run {} failed: {}", g.runId(), g.reason()); // as FailedRunMarker reports a dead letter's
        } else if (start instanceof OrderedAttempts.Blocked b) {
            waitFor(b, d);
        } else if (start instanceof OrderedAttempts.Worn w) {
            // Its wait used deliveries of this trigger: a fresh one gives its attempts the whole budget.
            log.debug("run {} may start but trigger {} is at attempt {}; published afresh", w.runId(),
                    d.streamId(), d.attempt());
            bus.publisher().publish(topic, Triggers.of(w.runId(), w.userId()));
        } else {
            log.debug("run {} is finished or unknown; trigger {} acked without work", runId.get(), d.streamId());
        }
    }

    /** The longest wait between two questions to PostgreSQL about a retry that is not due yet. */
    private static final long MAX_RETRY_WAIT_SLICE_MILLIS = 1000;

    /**
     * Waits in the handler while the run's retry is not due by PostgreSQL's clock ({@code next_attempt_at}), as
     * the policy's delay left; the caller then asks PostgreSQL again, which decides (at least every second, so a
     * replay, the sweeper or another owner that changes the run meanwhile is seen). This happens when the trigger
     * comes back before the bus's own wait was over: its partition changed owner during the backoff, and the new
     * owner took the entry at once. Unordered runs need no such check: their retry's copy waits in the bus's delay
     * set, due by the Redis clock, whoever reads it.
     *
     * <p>Why wait here rather than fail the delivery so that the bus retries it later: the partition is held either
     * way (the trigger is its head, and the user's later runs must wait for this one), and waiting holds it exactly
     * until the retry is due, no longer. A failed delivery would spend one of the run's {@code maxDeliveries} on an
     * attempt that never ran, and the next delivery would find the trigger worn and republish it behind the user's
     * later runs (which would then wait in place on it); on the last delivery the bus would dead-letter a run whose
     * handler had not failed that often. The local clock only measures the wait.
     */
    private static void awaitRetry(OrderedAttempts.NotDue n) throws InterruptedException {
        log.debug("run {}: its retry is due in {} ms by PostgreSQL's clock; waiting", n.runId(), n.millisLeft());
        TimeUnit.MILLISECONDS.sleep(Math.min(n.millisLeft(), MAX_RETRY_WAIT_SLICE_MILLIS));
    }

    /** See the class comment: defer behind the blocker, retry in place, or start the wait over. */
    private void waitFor(OrderedAttempts.Blocked b, Delivery d) throws WaitingForEarlierRun {
        if (!b.attemptLive()) {
            log.debug("run {} waits for {} run {}; triggers for both published behind", b.runId(),
                    b.blockerStatus().sql(), b.blocker());
            bus.publisher().publishAll(topic, List.of(Triggers.of(b.blocker(), b.userId()),
                    Triggers.of(b.runId(), b.userId())));
            return;
        }
        if (d.attempt() < maxDeliveries) {
            throw new WaitingForEarlierRun(b);
        }
        log.debug("run {} still waits for running run {}; its trigger starts over", b.runId(), b.blocker());
        bus.publisher().publish(topic, Triggers.of(b.runId(), b.userId()));
    }

    /**
     * The last allowed delivery failed: the bus dead-letters the trigger when this call returns, and its listener
     * ({@link FailedRunMarker}) would fail the run after that, on a thread of its own. Until then the user's next
     * run, whose trigger this partition hands over next, finds this one running on a live entry, and waits for a
     * retry in place (a second by default) before going to the back. So the run is failed here, committed before
     * the call returns; the listener then only names the dead letter on it. If this write fails, the listener's
     * (or the sweeper's) mark still fails the run, as before.
     */
    private void failLastAttempt(RunStore.Attempt a, Delivery d, Exception failure) {
        String reason = failure.getClass().getName() + (failure.getMessage() == null ? "" : ": " + failure.getMessage());
        try {
            if (failures.failLastAttempt(a.runId(), d.streamId(), reason)) {
                log.warn("run {} failed after {} deliveries of its trigger: {}", a.runId(), d.attempt(), reason);
            }
        } catch (SQLException | RuntimeException e) {
            log.warn("could not fail run {} now; its dead letter will", a.runId(), e);
            failure.addSuppressed(e);
        }
    }

    private void execute(RunStore.Attempt a, Delivery d) throws Exception {
        List<Reply> replies = null;
        Exception failure = null;
        try (HandlerWatch.Watched w = watch.watch(a.runId(), a.timeout())) {
            try {
                replies = HandlerCall.execute(handler, effects, progress, w, a);
            } catch (Exception e) {
                failure = e;
            }
            if (w.timedOut()) { // failed, whatever the handler did once told
                failure = new RunTimedOutException(a.runId(), w.timeout(), failure);
            }
        }
        if (failure != null) {
            // A run whose cancel was asked for, seen by this worker or not yet, is cancelled, and its trigger acked:
            // never retried, no dead letter. One statement per failed attempt, which changes nothing without a cancel.
            if (failures.cancelIfRequested(a.runId(), failure)) {
                log.info("run {} is cancelled; its handler ended with {}", a.runId(), failure.toString());
                return;
            }
            if (retries.isLast(d)) {
                failLastAttempt(a, d, failure); // cancelled instead if a cancel came just now (RunFailures.markFailed)
            } else if (failures.recordQuietly(a.runId(), failure, retries.after(d))) {
                log.info("run {} is cancelled; its handler ended with {}", a.runId(), failure.toString());
                return;
            }
            throw failure;
        }
        boolean completed;
        try {
            completed = commits.complete(a.runId(), replies).get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
        if (!completed) {
            log.debug("run {} was completed by another execution; its replies are kept", a.runId());
        }
        CrashPoints.reach(CrashPoints.Point.AFTER_COMMIT_BEFORE_ACK);
    }
}
