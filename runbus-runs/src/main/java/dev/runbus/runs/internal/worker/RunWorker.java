package dev.runbus.runs.internal.worker;

import dev.runbus.Batch;
import dev.runbus.BatchHandler;
import dev.runbus.Delivery;
import dev.runbus.runs.Reply;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.RunTimedOutException;
import dev.runbus.runs.internal.store.EffectStore;
import dev.runbus.runs.internal.store.RunStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Executes the runs the triggers of one read batch name, as a bus batch handler. A run that succeeds is
 * acked; one that fails is retried by the bus after the runs' retry policy's delay, which is recorded on the
 * run ({@code next_attempt_at}), and at {@code maxDeliveries} the bus dead-letters it ({@link FailedRunMarker}
 * then fails the run).
 *
 * <p>Each run, on a thread of the worker's handlers, right before its handler:
 * <ol>
 *   <li>its trigger's start is counted by the bus ({@link Batch#starting}: this handler starts each delivery itself,
 *       so a worker process that dies in the middle of a batch counts a delivery only for the runs it had
 *       started). It returns once Redis has the start, so PostgreSQL's count, next, is never ahead of the bus's;</li>
 *   <li>its attempt is started, in one transaction with the other runs starting then (group commit): pending|running
 *       → running, attempt + 1 — or, for a run that is done, failed or unknown, nothing (the short-circuit: its
 *       trigger is acked, nothing runs); or, for a run that already had {@code maxDeliveries} attempts by
 *       PostgreSQL's count (Redis lost its delivery count), running → failed (see {@link RunAttempts}): its
 *       trigger is acked, nothing runs;</li>
 *   <li>its handler;</li>
 *   <li>as the handler returns, in one transaction with the other runs finishing then: its replies
 *       (ON CONFLICT DO NOTHING) and done;</li>
 *   <li>then its trigger is acked, without waiting for the rest of the batch.</li>
 * </ol>
 * So PostgreSQL counts an attempt for a run whose handler starts, never for the rest of its batch, and a run costs
 * a share of two transactions, not two of its own. The bus's batch call waits for its runs to be settled.
 *
 * <p>The handlers' executor must run every task it accepts (a pool that silently discards tasks would leave
 * their triggers held until close); one that rejects a task makes the batch call run it itself.
 */
public final class RunWorker implements BatchHandler {

    private static final Logger log = LoggerFactory.getLogger(RunWorker.class);

    private final RunFailures failures;
    private final EffectStore effects;
    private final ProgressWrites progress;
    private final RunCommits commits;
    private final RunHandler handler;
    private final Executor handlers;
    private final RetrySchedule retries;
    private final HandlerWatch watch;

    /** {@code handlers} runs the run handlers; it must not be the executor of the bus calls into this worker. */
    public RunWorker(RunStore store, RunFailures failures, RunCommits commits, RunHandler handler,
                     Executor handlers, RetrySchedule retries) {
        this(store, failures, commits, handler, handlers, retries, null, HandlerWatch.idle());
    }

    /**
     * {@code progress}: where the handlers' progress reports go (null: nowhere); {@code watch}: what tells them of
     * their run's cancel.
     */
    public RunWorker(RunStore store, RunFailures failures, RunCommits commits, RunHandler handler,
                     Executor handlers, RetrySchedule retries, ProgressWrites progress, HandlerWatch watch) {
        this.progress = progress;
        this.watch = watch;
        this.failures = failures;
        this.effects = new EffectStore(store.dataSource(), store.schema());
        this.commits = commits;
        this.handler = handler;
        this.handlers = handlers;
        this.retries = retries;
    }

    @Override
    public void handle(Batch batch) throws Exception {
        List<Runnable> tasks = new ArrayList<>(batch.deliveries().size());
        CountDownLatch finished = new CountDownLatch(batch.deliveries().size());
        for (Delivery d : batch.deliveries()) {
            Optional<UUID> runId = Triggers.runIdOf(d.message());
            if (runId.isEmpty()) {
                log.warn("entry {} of topic {} is not a run trigger (id '{}'); acked without work", d.streamId(),
                        d.topic(), d.message().id());
                settle(batch, d, null, finished);
            } else {
                RunAttempts.Request request = new RunAttempts.Request(runId.get(), d.streamId(),
                        d.attempt() > commits.maxDeliveries());
                // The run handler joins the trigger's trace (its consumer span), on whichever thread runs it.
                tasks.add(batch.withTraceContext(d, () -> attempt(batch, d, request, finished)));
            }
        }
        for (Runnable task : tasks) {
            try {
                handlers.execute(task);
            } catch (RejectedExecutionException closing) {
                // The handlers' executor is shutting down: run it here rather than count a failure that the run
                // did not have.
                task.run();
            }
        }
        finished.await();
    }

    /** The bus now counts the trigger per run started, not per batch: see the class comment. */
    @Override
    public boolean startsEachDelivery() {
        return true;
    }

    /** Starts the trigger's delivery and the run's attempt, then runs its handler; the delivery is always settled. */
    private void attempt(Batch batch, Delivery d, RunAttempts.Request request, CountDownLatch finished) {
        RunAttempts.Start start;
        try {
            batch.starting(d);
            start = commits.startAttempts(List.of(request)).get(0).get();
        } catch (ExecutionException notStarted) { // this run's attempt could not be written: it alone fails
            settle(batch, d, notStarted.getCause(), finished);
            return;
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            settle(batch, d, interrupted, finished);
            return;
        } catch (RuntimeException closing) { // the subscription is closing: the trigger stays pending
            settle(batch, d, closing, finished);
            return;
        }
        if (!(start instanceof RunAttempts.Started started)) {
            if (start instanceof RunAttempts.GaveUp g) {
                log.warn("run {} failed: {}", g.runId(), g.reason()); // as FailedRunMarker reports a dead letter's
            } else {
                log.debug("run {} is finished or unknown; trigger {} acked without work", request.runId(),
                        d.streamId());
            }
            settle(batch, d, null, finished);
            return;
        }
        execute(batch, d, started.attempt(), finished);
    }

    /** Runs one handler and queues its completion; settles the delivery when the completion is committed. */
    private void execute(Batch batch, Delivery d, RunStore.Attempt a, CountDownLatch finished) {
        List<Reply> replies = null;
        Throwable thrown = null;
        try (HandlerWatch.Watched w = watch.watch(a.runId(), a.timeout())) {
            try {
                replies = HandlerCall.execute(handler, effects, progress, w, a);
            } catch (Throwable t) {
                thrown = t;
            }
            if (w.timedOut()) { // failed, whatever the handler did once told
                thrown = new RunTimedOutException(a.runId(), w.timeout(), thrown);
            }
        }
        if (thrown != null) {
            boolean cancelled = false;
            try {
                // A run whose cancel was asked for is cancelled now, and its trigger acked: never retried.
                cancelled = failures.recordQuietly(a.runId(), thrown, retries.after(d));
            } finally {
                settle(batch, d, cancelled ? null : thrown, finished); // or the batch call waits forever
            }
            if (cancelled) {
                log.info("run {} is cancelled; its handler ended with {}", a.runId(), thrown.toString());
            }
            return;
        }
        commits.complete(a.runId(), replies).whenComplete((completed, error) -> {
            Throwable failure = error instanceof CompletionException && error.getCause() != null ? error.getCause()
                    : error;
            try {
                if (failure == null) {
                    if (!completed) {
                        log.debug("run {} was completed by another execution; its replies are kept", a.runId());
                    }
                    CrashPoints.reach(CrashPoints.Point.AFTER_COMMIT_BEFORE_ACK);
                }
            } catch (RuntimeException unexpected) {
                failure = unexpected;
            } finally {
                settle(batch, d, failure, finished); // whatever happened above, the delivery is settled
            }
        });
    }

    private static void settle(Batch batch, Delivery d, Throwable failure, CountDownLatch finished) {
        try {
            if (failure == null) {
                batch.succeed(d);
            } else {
                batch.fail(d, failure);
            }
        } catch (IllegalStateException late) {
            // The batch call stopped waiting (the subscription was closed past its timeout): the entry stays
            // pending and the run converges on its next delivery.
            log.debug("run trigger {} finished after its worker stopped waiting: {}", d.streamId(), late.getMessage());
        } finally {
            finished.countDown();
        }
    }
}
