package dev.runbus.runs.internal.worker;

import dev.runbus.runs.internal.store.RunFlow;
import dev.runbus.Bus;
import dev.runbus.Message;
import dev.runbus.runs.Reply;
import dev.runbus.runs.internal.meters.RunMeters;
import dev.runbus.runs.internal.store.RunStore;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The three writes on the hot path of every run, each group-committed: submissions (insert, then publish the
 * new runs' triggers, pipelined), attempt starts, and completions (replies and done). A run still waits for
 * its own commit before it moves on, so every crash point keeps its meaning; only the transactions are shared.
 */
public final class RunCommits implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RunCommits.class);
    static final int MAX_BATCH = 500;

    /**
     * A run to insert and the trace context of its submission (message headers, empty without one), which its
     * trigger carries: the trigger is published from the committing thread, where the submitter's context is not.
     */
    public record Submission(RunStore.Insert insert, Map<String, String> traceContext) {
    }

    private final GroupCommitter<Submission, RunStore.Inserted> submits;
    private final GroupCommitter<RunAttempts.Request, RunAttempts.Start> attempts;
    private final GroupCommitter<RunStore.Completion, Boolean> completions;
    private final RunAttempts startsOf;

    /**
     * @param starts  the attempt starts of unordered runs, capped by their count in PostgreSQL
     * @param ordered runs in per-user order: triggers are keyed by the run's user id
     */
    public RunCommits(RunStore store, RunAttempts starts, Bus bus, String topic, boolean ordered) {
        this(store, starts, bus, topic, ordered, false, RunMeters.NONE);
    }

    /**
     * @param flowKeys whether triggers carry their runs' flow keys (the workers are flow-controlled)
     * @param meters   hears each completion, with the time since the run's submission
     */
    public RunCommits(RunStore store, RunAttempts starts, Bus bus, String topic, boolean ordered, boolean flowKeys,
                      RunMeters meters) {
        this.startsOf = starts;
        DelayedTriggers delayed = new DelayedTriggers(store, bus, topic);
        this.submits = new GroupCommitter<>("runbus-runs-submit-commit", MAX_BATCH, batch -> {
            List<RunStore.Inserted> inserted = store.insertAll(batch.stream().map(Submission::insert).toList());
            List<Message> triggers = new ArrayList<>();
            for (int i = 0; i < batch.size(); i++) {
                RunStore.Inserted result = inserted.get(i);
                if (result.created()) {
                    Submission in = batch.get(i);
                    Message trigger = Triggers.of(result.owner().runId(),
                            ordered ? in.insert().run().userId() : null, in.traceContext(),
                            RunFlow.of(in.insert().run()).onlyIf(flowKeys));
                    if (in.insert().delay() == null) {
                        triggers.add(trigger);
                    } else {
                        delayed.schedule(result.owner().runId(), trigger, in.insert().delay());
                    }
                }
            }
            if (!triggers.isEmpty()) {
                CrashPoints.reach(CrashPoints.Point.AFTER_INSERT_BEFORE_PUBLISH);
                try {
                    bus.publisher().publishAll(topic, triggers);
                } catch (RuntimeException e) { // the runs are committed: whatever failed, they stand

                    log.warn("{} runs are stored but their triggers could not be published ({}); the sweeper will "
                            + "publish them", triggers.size(), e.getMessage());
                }
            }
            return inserted;
        });
        this.attempts = new GroupCommitter<>("runbus-runs-attempt-commit", MAX_BATCH, starts::start);
        this.completions = new GroupCommitter<>("runbus-runs-done-commit", MAX_BATCH, batch -> {
            List<Boolean> out = new ArrayList<>(batch.size());
            for (RunStore.Completed c : store.completeAll(batch)) {
                if (c.completed() && !c.cancelled()) {
                    meters.completed(c.sinceSubmit());
                }
                out.add(c.completed());
            }
            return out;
        });
    }

    /**
     * Inserts the run (with whatever else is waiting), publishes its trigger if it is new, and says what it found:
     * the run holding its key, and whether this submission created it.
     *
     * @throws SQLException when that is not known: the insert failed, or the lookup of its conflicting key did
     */
    public RunStore.Inserted submit(Submission submission) throws SQLException {
        RunStore.Inserted s = submits.commit(submission);
        if (s.failure() != null) {
            throw s.failure();
        }
        return s;
    }

    /** The most attempts a run may have between two replays, the bus's run alone aside (see {@link RunAttempts}). */
    int maxDeliveries() {
        return startsOf.maxDeliveries();
    }

    /**
     * Starts the attempts of a read batch, as one group: one transaction for the batch (with whatever else is
     * waiting). One future per request: started, given up (the run is failed now), or nothing to do.
     */
    List<CompletableFuture<RunAttempts.Start>> startAttempts(List<RunAttempts.Request> requests) {
        return attempts.submitAll(requests);
    }

    /**
     * Queues a run's completion and returns at once; the future tells whether it completed the run. Runs that
     * finish at about the same time share a transaction.
     */
    CompletableFuture<Boolean> complete(UUID runId, List<Reply> replies) {
        return completions.submit(new RunStore.Completion(runId, replies));
    }

    @Override
    public void close() {
        submits.close();
        attempts.close();
        completions.close();
    }
}
