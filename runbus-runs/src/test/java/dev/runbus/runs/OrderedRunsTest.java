package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.DeadLetter;
import dev.runbus.RetryPolicy;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.internal.worker.CrashPoints;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Range;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Runs in per-user order through the whole runs layer (worker, sweeper, PostgreSQL, Redis) on a topic of one
 * partition: the order is PostgreSQL's, so it holds however the triggers arrive, including a trigger the
 * sweeper republished behind a later run's.
 */
class OrderedRunsTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(60);

    private final List<UUID> executed = Collections.synchronizedList(new ArrayList<>());

    /** Records the order runs executed in; flaky inputs fail their first attempt. */
    private final RunHandler recording = run -> {
        executed.add(run.runId());
        if (run.input().endsWith("flaky") && run.attempt() == 1) {
            throw new IllegalStateException("flaky input fails its first attempt");
        }
        return ECHO.execute(run);
    };

    private Runs orderedRuns(Bus bus, SubscribeOptions worker) {
        return runs(bus, configBuilder(schema, "w1", worker).ordered(true).build());
    }

    @Test
    void earlierRunsTriggerLost_sweeperRepublishesItBehindTheLaterOne_theLaterStillRunsSecond() {
        Bus bus = bus();
        Runs before = orderedRuns(bus, workerOptions().concurrency(1).build());
        UUID earlier = lostRun("first", Duration.ofMinutes(1)); // user u, committed, its trigger never published
        // Another user's run, executed, moves the group past the lost run's time: only then can the sweeper tell
        // that the earlier run's trigger is not somewhere ahead of the group.
        UUID other = before.submit(NewRun.of("s", "v", "other")).runId();
        before.startWorker(ECHO);
        Wait.until("the other user's run done", WAIT, () -> isDone(other));
        before.close();
        Runs runs = runs(bus, configBuilder(schema, "w2", workerOptions().concurrency(1).build()).ordered(true).build());
        UUID later = runs.submit(NewRun.of("s", "u", "second")).runId();

        SweepResult sweep = runs.sweepOnce();

        assertThat(sweep.republished()).isEqualTo(1);
        // The republished trigger of the earlier run is now behind the later run's.
        assertThat(redis.redis().xrange(stream(), Range.create("-", "+"))).extracting(m -> m.getBody().get("id"))
                .containsExactly(other.toString(), later.toString(), earlier.toString());

        runs.startWorker(recording);
        runs.startSweeper();
        Wait.until("both runs done", WAIT, () -> isDone(earlier) && isDone(later));

        assertThat(executed).containsExactly(earlier, later);
        assertThat(runs.get(earlier).orElseThrow().attempts()).isEqualTo(1);
        assertThat(runs.get(later).orElseThrow().attempts()).isEqualTo(1);
        assertThat(replyRows(earlier)).isEqualTo(2);
        assertThat(replyRows(later)).isEqualTo(2);
        assertThat(orderViolations(schema)).isZero();
        assertThat(bus.deadLetters().count("runs")).isZero();
    }

    @Test
    void earlierRunRunningOnAnEntryRedisLost_laterWaitsWithoutDeadLetteringUntilTheSweeperRepublishesIt() {
        Bus bus = bus();
        Runs runs = orderedRuns(bus, workerOptions().concurrency(1).build());
        UUID earlier = lostRun("first", Duration.ofMinutes(1));
        // Its attempt's worker died and Redis lost the entry: running, on an entry no pending list holds.
        execute("UPDATE " + schema + ".runs SET status = 'running', attempts = 1, stream_id = '1-0',"
                + " started_at = now() - interval '1 minute' WHERE id = '" + earlier + "'");
        UUID later = runs.submit(NewRun.of("s", "u", "second")).runId();

        runs.startWorker(recording);
        runs.startSweeper();
        Wait.until("both runs done", WAIT, () -> isDone(earlier) && isDone(later));

        assertThat(executed).containsExactly(earlier, later);
        assertThat(runs.get(earlier).orElseThrow().attempts()).isEqualTo(2); // the lost one and the one that finished
        assertThat(runs.get(later).orElseThrow().attempts()).isEqualTo(1); // waiting counted none
        // Republished once; or twice, when the later run's retry in place (minIdle 1 s) held the partition, and so
        // the republished trigger behind it, past the sweep threshold (500 ms): duplicates are absorbed.
        assertThat(runs.get(earlier).orElseThrow().republished()).isBetween(1, 2);
        assertThat(orderViolations(schema)).isZero();
        assertThat(bus.deadLetters().count("runs")).isZero();
    }

    @Test
    void manyUsersRunsFinishInSubmissionOrderPerUser() {
        Bus bus = bus();
        // A flaky run's retry holds its partition: soon, so that the test is about order and not about waiting.
        Runs runs = runs(bus, configBuilder(schema, "w1", workerOptions().concurrency(4).build()).ordered(true)
                .retryPolicy(dev.runbus.RetryPolicy.fixed(java.time.Duration.ofMillis(100))).build());
        List<UUID> ids = new ArrayList<>();
        for (int k = 0; k < 8; k++) {
            for (int u = 0; u < 5; u++) {
                ids.add(runs.submit(NewRun.of("s" + u, "user-" + u, "run " + k + (k % 3 == 1 ? " flaky" : ""))).runId());
            }
        }
        runs.startWorker(recording);
        runs.startSweeper();
        Wait.until("every run done", WAIT, () -> TestDatabase.count("SELECT count(*) FROM " + schema
                + ".runs WHERE status = 'done'") == ids.size());

        assertThat(orderViolations(schema)).isZero();
        for (UUID id : ids) {
            assertThat(replyRows(id)).as("replies of %s", id).isEqualTo(2);
        }
        assertThat(bus.deadLetters().count("runs")).isZero();
    }

    @Test
    void theOrderIndexIsCreatedByTheFirstOrderedRunsLayerOnly() {
        Bus bus = bus();
        runs(bus, "w1", workerOptions().build());
        assertThat(orderIndexes()).isZero(); // unordered runs do not maintain it
        orderedRuns(bus, workerOptions().build());
        assertThat(orderIndexes()).isEqualTo(1);
        orderedRuns(bus, workerOptions().build()); // safe to repeat
        assertThat(orderIndexes()).isEqualTo(1);
    }

    private long orderIndexes() {
        return TestDatabase.count("SELECT count(*) FROM pg_indexes WHERE schemaname = '" + schema
                + "' AND indexname = 'runs_user_unfinished_idx'");
    }

    /**
     * An ordered submission draws its number while holding its user's lock until commit, so another process's
     * submission for the same user, numbered before it, is committed (and visible to the order check) first.
     */
    @Test
    void anOrderedSubmissionWaitsForItsUsersLock() throws Exception {
        Runs runs = orderedRuns(bus(), workerOptions().build());
        try (var other = TestDatabase.pool().getConnection(); var st = other.createStatement()) {
            other.setAutoCommit(false);
            // What another process's ordered submission for user u holds until its commit.
            st.execute("SELECT pg_advisory_xact_lock(hashtext('runbus.user." + schema + ".runs'), hashtext('u'))");
            var submitted = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> runs.submit(NewRun.of("s", "u", "waits")).runId());
            // Waiting for this very lock, not any advisory lock of another test running beside this one.
            Wait.until("the submission waits for the user's lock", WAIT, () -> TestDatabase.count(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 2"
                            + " AND classid = hashtext('runbus.user." + schema + ".runs')::oid"
                            + " AND objid = hashtext('u')::oid") >= 1);
            assertThat(submitted).isNotDone();
            other.commit();
            UUID id = submitted.get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(runs.get(id)).isPresent();
        }
    }

    @Test
    void orderedRunsNeedTwoDeliveriesAtLeast() {
        assertThatThrownBy(() -> configBuilder(schema, "w1", workerOptions().maxDeliveries(1).build()).ordered(true)
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxDeliveries");
    }

    @Test
    void anUnorderedRunsTriggersCarryNoKey() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        runs.submit(NewRun.of("s", "u", "x"));
        assertThat(redis.redis().xrange(stream(), Range.create("-", "+"))).singleElement()
                .satisfies(m -> assertThat(m.getBody()).doesNotContainKey("key"));
    }

    /**
     * Issue 20, item 6: a user id longer than a message key may be (1000 characters) cannot key its trigger. It
     * used to be inserted and then fail the trigger of its whole group commit: that batch was retried item by
     * item, found its runs already inserted and reported every one of them {@code created=false}, with no
     * trigger. Now it is refused before anything is written, and the runs that queued with it are triggered.
     */
    @Test
    void userIdLongerThanAMessageKey_isRefusedAtSubmit_andTheRunsCommittedWithItKeepTheirTriggers() throws Exception {
        Runs runs = orderedRuns(bus(), workerOptions().build());
        String tooLong = "u".repeat(NewRun.MAX_ORDERED_USER_ID_LENGTH + 1);
        List<UUID> good = new ArrayList<>();
        AtomicReference<Throwable> refused = new AtomicReference<>();
        try (var other = TestDatabase.pool().getConnection(); var st = other.createStatement()) {
            other.setAutoCommit(false);
            // Holds the committer on a first submission, so that the next ones queue behind it and then share
            // one transaction, as under load.
            st.execute("SELECT pg_advisory_xact_lock(hashtext('runbus.user." + schema + ".runs'), hashtext('holder'))");
            List<Thread> submitters = new ArrayList<>();
            List<SubmitResult> results = Collections.synchronizedList(new ArrayList<>());
            submitters.add(submitter(() -> results.add(runs.submit(NewRun.of("s", "holder", "first")))));
            Wait.until("the first submission waits for its user's lock", WAIT, () -> userLockWaiters() == 1);
            for (int u = 0; u < 3; u++) {
                String user = "user-" + u;
                submitters.add(submitter(() -> results.add(runs.submit(NewRun.of("s", user, "queued")))));
            }
            submitters.add(submitter(() -> {
                try {
                    runs.submit(NewRun.of("s", tooLong, "too long a user"));
                } catch (Throwable t) {
                    refused.set(t);
                }
            }));
            Wait.until("every submission queued for the committer or refused", WAIT, () -> submitters.stream()
                    .allMatch(t -> t.getState() == Thread.State.WAITING || !t.isAlive()));
            other.commit();
            for (Thread t : submitters) {
                t.join(WAIT.toMillis());
            }
            assertThat(results).hasSize(4).allSatisfy(r -> assertThat(r.created()).isTrue());
            results.forEach(r -> good.add(r.runId()));
        }

        assertThat(refused.get()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("userId").hasMessageContaining("1001").hasMessageContaining("1000");
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs")).isEqualTo(4);
        assertThat(redis.redis().xrange(stream(), Range.create("-", "+"))).extracting(m -> m.getBody().get("id"))
                .containsExactlyInAnyOrderElementsOf(good.stream().map(UUID::toString).toList());
    }

    /** Issue 20, item 6: the longest user id a message key takes is accepted. */
    @Test
    void userIdAsLongAsAMessageKeyMayBe_isAcceptedAndKeysItsTrigger() {
        Runs runs = orderedRuns(bus(), workerOptions().build());
        String longest = "u".repeat(NewRun.MAX_ORDERED_USER_ID_LENGTH);

        assertThat(runs.submit(NewRun.of("s", longest, "x")).created()).isTrue();
        assertThat(redis.redis().xrange(stream(), Range.create("-", "+"))).singleElement()
                .satisfies(m -> assertThat(m.getBody().get("key")).isEqualTo(longest));
    }

    /** Unordered runs' triggers carry no key, so their user ids have only the bound of every id (in bytes). */
    @Test
    void unorderedRunsTakeAUserIdLongerThanAMessageKey() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        assertThat(runs.submit(NewRun.of("s", "u".repeat(NewRun.MAX_ID_BYTES), "x")).created()).isTrue();
        assertThat(redis.redis().xlen(stream())).isEqualTo(1);
    }

    /**
     * Issue 20, item 6: a lost run whose user id cannot key a trigger (written before submissions refused it, or
     * by another program) made every sweep that found it throw, after marking the whole page republished, so no
     * lost run of that page was ever republished. The sweep skips and reports that one run.
     */
    @Test
    void lostRunWhoseUserIdCannotKeyATrigger_isSkippedBySweeps_andTheOtherLostRunsAreRepublished() {
        Runs runs = orderedRuns(bus(), workerOptions().build());
        UUID before = lostRun("before", Duration.ofMinutes(3));
        UUID bad = lostRun("bad", Duration.ofMinutes(2));
        execute("UPDATE " + schema + ".runs SET user_id = repeat('u', 1001), updated_at = now() - interval"
                + " '2 minutes' WHERE id = '" + bad + "'");
        UUID after = lostRun("after", Duration.ofMinutes(1));
        execute("UPDATE " + schema + ".runs SET user_id = 'v', updated_at = now() - interval '1 minute'"
                + " WHERE id = '" + after + "'");

        SweepResult sweep = runs.sweepOnce();

        assertThat(sweep.examined()).isEqualTo(3);
        assertThat(sweep.republished()).isEqualTo(2);
        assertThat(sweep.runsSkipped()).isEqualTo(1);
        assertThat(redis.redis().xrange(stream(), Range.create("-", "+"))).extracting(m -> m.getBody().get("id"))
                .containsExactlyInAnyOrder(before.toString(), after.toString());
        assertThat(republishedOf(bad)).as("not marked: it has no trigger").isZero();
        assertThat(republishedOf(before)).isEqualTo(1);
        assertThat(republishedOf(after)).isEqualTo(1);
        assertThat(runs.get(bad).orElseThrow().status()).isEqualTo(RunStatus.PENDING);
    }

    /**
     * Issue 20, item 7: a poison run's last failure used to be made final only by the dead-letter listener,
     * asynchronously, so the user's next run found it still running on a live entry: its trigger failed and waited
     * for a retry in place (about a second by the default policy) and then went to the back. Here the listener's
     * write is held back: the next run still starts at once, because the worker failed the poison run before its
     * handler call returned; the listener then only names the dead letter on the failed run.
     */
    @Test
    void poisonRunsLastFailure_isFinalBeforeThePartitionMovesOn_theUsersNextRunStartsAtOnce() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, configBuilder(schema, "w1", workerOptions().concurrency(1).build()).ordered(true)
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(100))).build());
        CountDownLatch listenerMayWrite = new CountDownLatch(1);
        CrashPoints.install(p -> {
            if (p == CrashPoints.Point.AFTER_DEAD_LETTER_BEFORE_FAILED) {
                try {
                    listenerMayWrite.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        UUID poison;
        UUID next;
        try {
            poison = runs.submit(NewRun.of("s", "u", "poison")).runId();
            next = runs.submit(NewRun.of("s", "u", "next")).runId();
            runs.startWorker(run -> {
                executed.add(run.runId());
                if (run.input().equals("poison")) {
                    throw new IllegalStateException("poison input");
                }
                return ECHO.execute(run);
            });

            // No sweeper runs, and the listener is held: only the worker can have failed the poison run.
            Wait.until("the next run done while the dead-letter listener is held", Duration.ofSeconds(10),
                    () -> isDone(next));
            Run failed = runs.get(poison).orElseThrow();
            assertThat(failed.status()).isEqualTo(RunStatus.FAILED);
            assertThat(failed.error()).get().asString().contains("poison input");
            assertThat(failed.deadLetterId()).isEmpty();
        } finally {
            listenerMayWrite.countDown();
            CrashPoints.install(null);
        }
        String deadLetter = Wait.until("the listener names the dead letter", WAIT,
                () -> runs.get(poison).orElseThrow().deadLetterId(), java.util.Optional::isPresent).orElseThrow();

        assertThat(bus.deadLetters().list("runs", null, 10)).extracting(DeadLetter::id).containsExactly(deadLetter);
        assertThat(runs.get(poison).orElseThrow().status()).isEqualTo(RunStatus.FAILED);
        assertThat(executed).containsExactly(poison, poison, poison, next);
        assertThat(runs.get(next).orElseThrow().attempts()).isEqualTo(1);
        assertThat(replyRows(next)).isEqualTo(2);
        assertThat(orderViolations(schema)).isZero();
    }

    /**
     * The worker failed the poison run itself and the listener's write was lost: the sweeper's reconciliation
     * names the dead letter on the run, so a replay sends that dead letter back.
     */
    @Test
    void poisonRunFailedByItsWorker_whoseListenerMarkIsLost_getsItsDeadLetterFromTheSweeper() {
        Bus bus = bus();
        Runs runs = runs(bus, configBuilder(schema, "w1", workerOptions().concurrency(1).build()).ordered(true)
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(100))).build());
        CountDownLatch markLost = new CountDownLatch(1);
        CrashPoints.install(p -> {
            if (p == CrashPoints.Point.AFTER_DEAD_LETTER_BEFORE_FAILED) {
                markLost.countDown();
                throw new IllegalStateException("the listener's mark is lost");
            }
        });
        UUID poison;
        try {
            runs.startWorker(ALWAYS_FAILS);
            poison = runs.submit(NewRun.of("s", "u", "poison")).runId();
            Wait.until("dead-lettered", WAIT, () -> bus.deadLetters().count("runs") == 1);
            // The dead letter is visible before the listener's thread gets to the mark: keep the hook until then.
            Wait.until("the listener's mark lost", WAIT, () -> markLost.getCount() == 0);
        } finally {
            CrashPoints.install(null);
        }
        assertThat(runs.get(poison).orElseThrow().status()).isEqualTo(RunStatus.FAILED);
        assertThat(runs.get(poison).orElseThrow().deadLetterId()).isEmpty();

        SweepResult sweep = runs.sweepOnce();

        assertThat(sweep.deadLettersReconciled()).isEqualTo(1);
        Run failed = runs.get(poison).orElseThrow();
        assertThat(failed.status()).isEqualTo(RunStatus.FAILED);
        assertThat(failed.deadLetterId()).contains(bus.deadLetters().list("runs", null, 10).get(0).id());
        assertThat(failed.error()).get().asString().contains("cannot handle input poison");
        assertThat(failed.attempts()).isEqualTo(3);
        assertThat(runs.sweepOnce().deadLettersReconciled()).isZero();
    }

    private static Thread submitter(Runnable submit) {
        Thread t = new Thread(submit, "test-submitter");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Submissions waiting for the per-user lock of this test's schema (whatever other tests wait for). */
    private long userLockWaiters() {
        return TestDatabase.count("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                + " AND objsubid = 2 AND classid = (hashtext('runbus.user." + schema + ".runs')::bigint & 4294967295)::oid");
    }

    private boolean isDone(UUID id) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE id = '" + id
                + "' AND status = 'done'") == 1;
    }
}
