package dev.runbus.runs.internal.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.NewRun;
import dev.runbus.runs.internal.store.Migrations;
import dev.runbus.runs.internal.store.RunStore;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.TestServers;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Starting attempts on the real PostgreSQL: which stream entry becomes a run's current attempt, and the cap. */
class RunAttemptsTest {

    private static final int MAX_DELIVERIES = 3;

    private String schema;
    private RunStore store;
    private RunAttempts attempts;

    @BeforeEach
    void schema() {
        schema = TestServers.newSchema("rt");
        Migrations.apply(TestDatabase.pool(), schema);
        store = new RunStore(TestDatabase.pool(), schema);
        attempts = new RunAttempts(TestDatabase.pool(), schema, MAX_DELIVERIES);
    }

    @AfterEach
    void drop() {
        TestServers.dropSchema(schema);
    }

    private UUID newRun() throws Exception {
        UUID id = UUID.randomUUID();
        store.insertAll(List.of(new RunStore.Insert(id, "key-" + id, "hash", NewRun.of("s", "u", "in"))));
        return id;
    }

    private long column(UUID run, String column) {
        return TestDatabase.count("SELECT " + column + " FROM " + schema + ".runs WHERE id = '" + run + "'");
    }

    private long where(UUID run, String condition) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE id = '" + run + "' AND "
                + condition);
    }

    /**
     * Two triggers of one run in one read batch: the newer entry is the current attempt, compared as stream
     * ids (milliseconds, then sequence), not as text, where "…-9" sorts after "…-10". A dead letter fails a run
     * only while its entry is the current attempt, so the wrong one would let the newer one's dead letter pass.
     */
    @Test
    void twoTriggersOfOneRunInOneBatch_theNewerEntryIsTheCurrentAttempt() throws Exception {
        UUID run = newRun();
        List<RunAttempts.Start> started = attempts.start(List.of(
                new RunAttempts.Request(run, "1700000000000-9"),
                new RunAttempts.Request(run, "1700000000000-10")));

        assertThat(started).allMatch(s -> s instanceof RunAttempts.Started);
        assertThat(started).extracting(s -> ((RunAttempts.Started) s).attempt().attempt()).containsExactly(1, 2);
        assertThat(column(run, "attempts")).isEqualTo(2);
        assertThat(where(run, "stream_id = '1700000000000-10'")).isEqualTo(1);

        attempts.start(List.of(new RunAttempts.Request(run, "999999999999-5"),
                new RunAttempts.Request(run, "1700000000001-0")));
        assertThat(where(run, "stream_id = '1700000000001-0'")).isEqualTo(1);
    }

    /** A run that had maxDeliveries attempts is failed by the statement that would start it; nothing executes. */
    @Test
    void aRunAtTheLimit_isFailedInsteadOfStarted() throws Exception {
        UUID run = newRun();
        for (int i = 1; i <= MAX_DELIVERIES; i++) {
            assertThat(attempts.start(List.of(new RunAttempts.Request(run, i + "-0"))).get(0))
                    .isInstanceOf(RunAttempts.Started.class);
        }
        new RunFailures(TestDatabase.pool(), schema, MAX_DELIVERIES).recordFailure(run,
                "java.lang.IllegalStateException: boom", java.util.Optional.empty());

        List<RunAttempts.Start> again = attempts.start(List.of(new RunAttempts.Request(run, "9-0")));

        assertThat(again).containsExactly(new RunAttempts.GaveUp(run,
                "gave up after 3 attempts (maxDeliveries 3); last error: java.lang.IllegalStateException: boom"));
        assertThat(where(run, "status = 'failed' AND finished_at IS NOT NULL AND next_attempt_at IS NULL"))
                .isEqualTo(1);
        assertThat(column(run, "attempts")).isEqualTo(MAX_DELIVERIES);
        // A failed run's next trigger is only acked.
        assertThat(attempts.start(List.of(new RunAttempts.Request(run, "10-0"))))
                .containsExactly(new RunAttempts.NothingToDo());
    }

    /** More triggers of a run in one call than it has attempts left: the newest entries get them, no more. */
    @Test
    void moreTriggersInOneCallThanAttemptsLeft_theNewestExecuteUpToTheLimit() throws Exception {
        UUID run = newRun();
        attempts.start(List.of(new RunAttempts.Request(run, "1-0")));

        List<RunAttempts.Start> started = attempts.start(List.of(new RunAttempts.Request(run, "2-0"),
                new RunAttempts.Request(run, "4-0"), new RunAttempts.Request(run, "3-0")));

        assertThat(started.get(0)).isEqualTo(new RunAttempts.NothingToDo());
        assertThat(started.get(1)).isInstanceOf(RunAttempts.Started.class);
        assertThat(started.get(2)).isInstanceOf(RunAttempts.Started.class);
        assertThat(List.of(((RunAttempts.Started) started.get(1)).attempt().attempt(),
                ((RunAttempts.Started) started.get(2)).attempt().attempt())).containsExactly(2, 3);
        assertThat(column(run, "attempts")).isEqualTo(MAX_DELIVERIES);
        assertThat(where(run, "status = 'running' AND stream_id = '4-0'")).isEqualTo(1);
    }

    /** Other runs of the same call are not held back by one that gave up. */
    @Test
    void oneRunGivingUp_othersOfTheCallStart() throws Exception {
        UUID spent = newRun();
        UUID fresh = newRun();
        TestDatabase.count("WITH u AS (UPDATE " + schema + ".runs SET status = 'running', attempts = 3 WHERE id = '"
                + spent + "' RETURNING 1) SELECT count(*) FROM u");

        List<RunAttempts.Start> started = attempts.start(List.of(new RunAttempts.Request(spent, "5-0"),
                new RunAttempts.Request(fresh, "6-0")));

        assertThat(started.get(0)).isInstanceOf(RunAttempts.GaveUp.class);
        assertThat(started.get(1)).isInstanceOf(RunAttempts.Started.class);
        assertThat(where(fresh, "status = 'running' AND attempts = 1")).isEqualTo(1);
    }
}
