package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.RetryPolicy;
import dev.runbus.runs.internal.store.CountStore;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Wait;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * {@link RunCounts}: exact (compared with a count of the whole table, and with the numbers the test made), and
 * cheap (the unfinished half reads the partial index, not the table).
 */
class RunCountsTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void countsAreExactAfterDoneFailedReplayedAndDeduplicatedRuns() {
        AtomicBoolean healed = new AtomicBoolean();
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().maxDeliveries(2).build())
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(50))).build());
        assertThat(runs.counts()).isEqualTo(new RunCounts(0, 0, 0, 0));
        runs.startWorker(run -> {
            if (run.input().startsWith("poison") && !(healed.get() && run.input().equals("poison-0"))) {
                throw new IllegalStateException("poisoned");
            }
            return List.of(Reply.assistant("ok"));
        });
        List<UUID> good = new ArrayList<>();
        List<UUID> poison = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            good.add(runs.submit(new NewRun("s", "u", "good-" + i, "good-" + i)).runId());
            assertThat(runs.submit(new NewRun("s", "u", "good-" + i, "good-" + i)).created()).isFalse();
        }
        for (int i = 0; i < 3; i++) {
            poison.add(runs.submit(new NewRun("s", "u", "poison-" + i, "poison-" + i)).runId());
        }
        for (UUID id : good) {
            Wait.until("good done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        }
        for (UUID id : poison) {
            Wait.until("poison failed", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.FAILED);
        }
        assertThat(runs.counts()).isEqualTo(new RunCounts(0, 0, 7, 3)).isEqualTo(groupedByStatus());

        healed.set(true);
        runs.replay(poison.get(0)); // failed → pending → running → done: one fewer failed, one more done
        Wait.until("replayed run done", WAIT, () -> runs.get(poison.get(0)).orElseThrow().status() == RunStatus.DONE);
        runs.replay(poison.get(1)); // fails again: failed → pending → ... → failed
        Wait.until("replayed poison failed again", WAIT,
                () -> runs.get(poison.get(1)).orElseThrow().status() == RunStatus.FAILED
                        && runs.get(poison.get(1)).orElseThrow().attempts() == 4);
        UUID waiting = lostRun("pending", Duration.ZERO); // a pending run nobody triggers

        assertThat(runs.counts()).isEqualTo(new RunCounts(1, 0, 8, 2)).isEqualTo(groupedByStatus());
        assertThat(RunCounts.read(TestDatabase.pool(), schema)).isEqualTo(runs.counts());
        assertThat(runs.get(waiting)).isPresent();
    }

    @Test
    void countsFollowChangesMadeByHand_insertsUpdatesDeletesAndTruncate() {
        runs(bus(), "w1", workerOptions().build());
        execute(bulkRuns(1000, "done"));
        execute(bulkRuns(10, "failed"));
        execute(bulkRuns(5, "running"));
        // Made by hand, the failed runs name no dead letter.
        assertThat(RunCounts.read(TestDatabase.pool(), schema)).isEqualTo(new RunCounts(0, 5, 1000, 10, 10));
        execute("UPDATE " + schema + ".runs SET status = 'failed' WHERE status = 'running'");
        execute("DELETE FROM " + schema + ".runs WHERE status = 'done' AND idempotency_key LIKE 'bulk-done-1%'");
        RunCounts after = RunCounts.read(TestDatabase.pool(), schema);
        assertThat(after).isEqualTo(groupedByStatus());
        assertThat(after.failed()).isEqualTo(15);
        assertThat(after.failedWithoutDeadLetter()).isEqualTo(15);
        execute("UPDATE " + schema + ".runs SET dead_letter_id = 'dl-' || id WHERE status = 'failed'"
                + " AND idempotency_key LIKE 'bulk-failed-%'");
        assertThat(RunCounts.read(TestDatabase.pool(), schema)).isEqualTo(groupedByStatus())
                .extracting(RunCounts::failedWithoutDeadLetter).isEqualTo(5L);
        assertThat(after.done()).isEqualTo(1000 - 112); // 1, 10..19, 100..199 and 1000 start with 1

        execute("TRUNCATE " + schema + ".runs CASCADE");
        assertThat(RunCounts.read(TestDatabase.pool(), schema)).isEqualTo(new RunCounts(0, 0, 0, 0));
        execute(bulkRuns(3, "done"));
        assertThat(RunCounts.read(TestDatabase.pool(), schema)).isEqualTo(new RunCounts(0, 0, 3, 0));
    }

    @Test
    void unfinishedRunsAreCountedThroughThePartialIndex_notByReadingTheTable() throws Exception {
        runs(bus(), "w1", workerOptions().build());
        execute(bulkRuns(50_000, "done"));
        execute(bulkRuns(40, "pending"));
        execute("ANALYZE " + schema + ".runs");
        String plan = explain(CountStore.sql(schema));
        System.out.println("plan of the count over 50,040 runs:\n" + plan);
        assertThat(plan).contains("runs_unfinished_idx").doesNotContain("Seq Scan on runs");
        // The check can fail: the count every scrape used to make reads the whole table.
        assertThat(explain("SELECT status, count(*) FROM " + schema + ".runs GROUP BY status"))
                .contains("Seq Scan on runs");
        assertThat(RunCounts.read(TestDatabase.pool(), schema)).isEqualTo(new RunCounts(40, 0, 50_000, 0));
    }

    String bulkRuns(int n, String status) {
        return "INSERT INTO " + schema + ".runs (id, idempotency_key, input_hash, session_id, user_id, input, status)"
                + " SELECT gen_random_uuid(), 'bulk-" + status + "-' || i, 'h', 's', 'u', 'x', '" + status + "'"
                + " FROM generate_series(1, " + n + ") i";
    }

    static String explain(String sql) throws Exception {
        StringBuilder plan = new StringBuilder();
        try (Connection c = TestDatabase.pool().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("EXPLAIN " + sql)) {
            while (rs.next()) {
                plan.append(rs.getString(1)).append('\n');
            }
        }
        return plan.toString();
    }

    /** The counts by reading every run: what RunCounts must agree with. */
    RunCounts groupedByStatus() {
        Map<RunStatus, Long> m = new EnumMap<>(RunStatus.class);
        for (RunStatus s : RunStatus.values()) {
            m.put(s, TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE status = '" + s.sql() + "'"));
        }
        return new RunCounts(m.get(RunStatus.PENDING), m.get(RunStatus.RUNNING), m.get(RunStatus.DONE),
                m.get(RunStatus.FAILED), TestDatabase.count("SELECT count(*) FROM " + schema + ".runs"
                        + " WHERE status = 'failed' AND dead_letter_id IS NULL"));
    }
}
