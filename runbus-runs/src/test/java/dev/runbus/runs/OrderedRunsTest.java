package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.testing.Wait;
import io.lettuce.core.Range;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
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
        Runs runs = orderedRuns(bus, workerOptions().concurrency(4).build());
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
            Wait.until("the submission waits for the user's lock", WAIT, () -> TestDatabase.count(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                            + " AND wait_event = 'advisory' AND query LIKE '%pg_advisory_xact_lock%unnest%'") >= 1);
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

    private boolean isDone(UUID id) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE id = '" + id
                + "' AND status = 'done'") == 1;
    }
}
