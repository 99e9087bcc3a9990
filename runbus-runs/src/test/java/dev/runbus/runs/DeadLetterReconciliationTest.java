package dev.runbus.runs;

import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.DeadLetter;
import dev.runbus.RetryPolicy;
import dev.runbus.runs.internal.worker.CrashPoints;
import dev.runbus.runs.internal.worker.FailedRunMarker;
import dev.runbus.runs.internal.worker.RunFailures;
import dev.runbus.runs.internal.worker.Triggers;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Range;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A dead letter fails its run only while the run's current attempt is the dead-lettered entry (issue 10,
 * defects 3 and 4): in the listener's path and in the sweeper's, whatever the clocks say, and whatever else
 * the dead-letter stream holds.
 */
@OnDeployments({LOCAL, REDIS_62})
class DeadLetterReconciliationTest extends RunsTestSupport {

    DeadLetterReconciliationTest(Deployment deployment) {
        super(deployment);
    }

    static final Duration WAIT = Duration.ofSeconds(30);

    private Run awaitStatus(Runs runs, UUID id, RunStatus status) {
        return Wait.until(status.sql(), WAIT, () -> runs.get(id).orElseThrow(), r -> r.status() == status);
    }

    /** Issue 10, defect 3: the listener's mark was lost, and PostgreSQL's clock is ahead of the worker's. */
    @Test
    void lostListenerMark_sweeperFailsTheRunWhateverTheClocks() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().maxDeliveries(1).build());
        CountDownLatch markLost = new CountDownLatch(1);
        CrashPoints.install(p -> {
            if (p == CrashPoints.Point.AFTER_DEAD_LETTER_BEFORE_FAILED) {
                markLost.countDown();
                throw new IllegalStateException("the listener's mark is lost");
            }
        });
        UUID id;
        try {
            runs.startWorker(ALWAYS_FAILS);
            id = runs.submit(NewRun.of("s", "u", "poison")).runId();
            Wait.until("dead-lettered", WAIT, () -> bus.deadLetters().count("runs") == 1);
            // The dead letter is visible before the listener's thread gets to the mark: keep the hook until then.
            Wait.until("the listener's mark lost", WAIT, () -> markLost.getCount() == 0);
        } finally {
            CrashPoints.install(null);
        }
        assertThat(runs.get(id).orElseThrow().status()).isEqualTo(RunStatus.RUNNING);
        // PostgreSQL's clock two seconds ahead of the worker's: the run looks touched after its dead letter.
        execute("UPDATE " + schema + ".runs SET updated_at = updated_at + interval '2 seconds'");

        SweepResult sweep = runs.sweepOnce();

        assertThat(sweep.deadLettersReconciled()).isEqualTo(1);
        Run failed = runs.get(id).orElseThrow();
        assertThat(failed.status()).isEqualTo(RunStatus.FAILED);
        assertThat(failed.deadLetterId()).contains(bus.deadLetters().list("runs", null, 10).get(0).id());
        assertThat(failed.error()).get().asString().contains("cannot handle input poison");
        assertThat(failed.attempts()).isEqualTo(1);
        assertThat(runs.sweepOnce().deadLettersReconciled()).isZero();
    }

    /** Issue 10, defect 3: a duplicate or late mark after the operator replayed the run changes nothing. */
    @Test
    void lateMarkAfterReplay_leavesTheReplayedRunPending() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().maxDeliveries(1).build());
        runs.startWorker(ALWAYS_FAILS);
        UUID id = runs.submit(NewRun.of("s", "u", "bad")).runId();
        awaitStatus(runs, id, RunStatus.FAILED);
        runs.close(); // no worker: the replayed run stays pending while the marks arrive
        DeadLetter dl = bus.deadLetters().list("runs", null, 10).get(0);
        runs.replay(id);
        assertThat(runs.get(id).orElseThrow().status()).isEqualTo(RunStatus.PENDING);

        try (FailedRunMarker late = new FailedRunMarker(new RunFailures(TestDatabase.pool(), schema, 1), "runs",
                RunsConfig.DEFAULT_GROUP)) {
            late.onDeadLetter(dl); // the listener hears of the dead letter again
        } // close waits for its write
        execute("DELETE FROM " + schema + ".sweeper_state"); // and the sweeper reconciles it again
        Runs sweeper = runs(bus, "w2", workerOptions().build());
        assertThat(sweeper.sweepOnce().deadLettersReconciled()).isZero();

        Run run = runs.get(id).orElseThrow();
        assertThat(run.status()).isEqualTo(RunStatus.PENDING);
        assertThat(run.deadLetterId()).isEmpty();
    }

    /**
     * Issue 10, defect 3: the first trigger of a run is dead-lettered while the run executes on a second
     * trigger; that execution then succeeds and its replies are kept. Two attempts, so maxDeliveries 2 (the
     * attempts cap counts both triggers' attempts); the first trigger's dead letter is written as
     * {@code dead_letter.lua} writes it, and its retry is far off, so the bus leaves it alone meanwhile.
     */
    @Test
    void deadLetterOfAnOldTrigger_doesNotFailTheRunRunningOnAnother() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, configBuilder(schema, "w1", workerOptions().maxDeliveries(2).batchSize(1)
                .minIdle(Duration.ofMinutes(1)).build()).retryPolicy(RetryPolicy.fixed(Duration.ofMinutes(1)))
                .build());
        CountDownLatch secondStarted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        runs.startWorker(run -> {
            if (run.attempt() == 1) {
                // A duplicate trigger (as a republish makes), published once this attempt is the current one.
                bus.publisher().publish("runs", Triggers.of(run.runId()));
                assertThat(secondStarted.await(20, TimeUnit.SECONDS)).isTrue();
                throw new IllegalStateException("the first execution fails");
            }
            secondStarted.countDown();
            assertThat(release.await(20, TimeUnit.SECONDS)).isTrue();
            return ECHO.execute(run);
        });
        UUID id = runs.submit(NewRun.of("s", "u", "twice")).runId();
        Wait.until("first execution failed", WAIT, () -> runs.get(id).orElseThrow().error().isPresent());
        String first = redis.redis().xrange(stream(), Range.create("-", "+")).get(0).getId();
        deadLetterWithoutListeners(first);
        DeadLetter dl = bus.deadLetters().list("runs", null, 10).get(0);
        assertThat(dl.originalStreamId()).isEqualTo(first);
        // The listener's path and the sweeper's, each for certain before the second execution returns.
        try (FailedRunMarker marker = new FailedRunMarker(new RunFailures(TestDatabase.pool(), schema, 1), "runs",
                RunsConfig.DEFAULT_GROUP)) {
            marker.onDeadLetter(dl);
        }
        assertThat(runs.sweepOnce().deadLettersReconciled()).isZero();
        assertThat(runs.get(id).orElseThrow().status()).isEqualTo(RunStatus.RUNNING);

        release.countDown();

        Run done = awaitStatus(runs, id, RunStatus.DONE);
        assertThat(done.attempts()).isEqualTo(2);
        assertThat(done.deadLetterId()).isEmpty();
        assertThat(runs.replies(id)).extracting(StoredReply::content).containsExactly("echo:twice", "done:twice");
    }

    /**
     * Issue 10, defect 4: entries another tool wrote into the dead-letter stream are skipped and counted; the
     * sweeper still republishes a lost run, and the dead letters can still be listed.
     */
    @Test
    void malformedDeadLetters_areSkippedAndTheSweeperStillRepublishes() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        String foreign = redis.redis().xadd(deadLetterStream(), Map.of("note", "written by another tool"));
        String broken = redis.redis().xadd(deadLetterStream(), Map.of("dl:group", RunsConfig.DEFAULT_GROUP,
                "dl:stream_id", "1-0", "dl:deliveries", "many", "dl:at", "yesterday"));
        UUID lost = lostRun("lost", Duration.ofMinutes(1));

        SweepResult sweep = runs.sweepOnce();

        assertThat(sweep.republished()).isEqualTo(1);
        assertThat(sweep.deadLettersSkipped()).isEqualTo(2);
        assertThat(republishedOf(lost)).isEqualTo(1);
        assertThat(redis.redis().xlen(stream())).isEqualTo(1);
        assertThat(runs.sweepOnce().deadLettersSkipped()).isZero(); // the checkpoint moved past them

        List<DeadLetter> listed = bus.deadLetters().list("runs", null, 10);
        assertThat(listed).extracting(DeadLetter::id).containsExactly(foreign, broken);
        DeadLetter first = listed.get(0);
        assertThat(first.group()).isEmpty();
        assertThat(first.originalStreamId()).isEmpty();
        assertThat(first.deliveries()).isZero();
        assertThat(first.deadAt()).isEqualTo(Instant.ofEpochMilli(Long.parseLong(foreign.split("-")[0])));
        assertThat(listed.get(1).group()).isEqualTo(RunsConfig.DEFAULT_GROUP);
        assertThat(listed.get(1).deliveries()).isZero();
        assertThat(bus.deadLetters().get("runs", broken)).isPresent();
    }
}
