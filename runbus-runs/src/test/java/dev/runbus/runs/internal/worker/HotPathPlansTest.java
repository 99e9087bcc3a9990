package dev.runbus.runs.internal.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.internal.store.Migrations;
import dev.runbus.runs.internal.store.RunStore;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The plans PostgreSQL gives the two statements every run passes through, its attempt start and its completion:
 * they find their runs by primary key, whatever the table has been through. Every run passes through pending and
 * running, so the index ranges of those statuses (runs_unfinished_idx, runs_status_created_idx) hold an entry per
 * run ever started until vacuum removes it, and a plan that scans them, or the table, costs more with every run
 * the table has seen.
 */
class HotPathPlansTest {

    private static final int MAX_DELIVERIES = 3;

    private String schema;

    @BeforeEach
    void schema() {
        schema = TestServers.newSchema("rt");
        Migrations.apply(TestDatabase.pool(), schema);
    }

    @AfterEach
    void drop() {
        TestServers.dropSchema(schema);
    }

    @Test
    void anAttemptStartReadsItsRunsByKey() throws Exception {
        RunStore store = new RunStore(TestDatabase.pool(), schema);
        RunAttempts attempts = new RunAttempts(TestDatabase.pool(), schema, MAX_DELIVERIES);
        List<UUID> pending = aTableThatHasSeenWork(store, attempts);
        String ids = uuids(pending);
        assertReadByKey(attempts.sql(), ids, sameForEach(pending, "1-1", "text"),
                sameForEach(pending, Integer.toString(MAX_DELIVERIES), "int"), ids);
    }

    @Test
    void aCompletionReadsItsRunsByKey() throws Exception {
        RunStore store = new RunStore(TestDatabase.pool(), schema);
        RunAttempts attempts = new RunAttempts(TestDatabase.pool(), schema, MAX_DELIVERIES);
        List<UUID> pending = aTableThatHasSeenWork(store, attempts);
        String ids = uuids(pending);
        assertReadByKey(store.completeSql(), "'done'", ids, ids, sameForEach(pending, "1", "int"),
                sameForEach(pending, "assistant", "text"), sameForEach(pending, "ok", "text"));
    }

    /**
     * A fresh table grows fast, and autovacuum analyzes it once a minute at most. A plan kept from the first
     * executions, made when the table held a page, scans the table; each execution is planned for the table as it
     * is. One connection, so that every execution is on the session that would keep a plan.
     */
    @Test
    void aTableThatGrewAfterTheFirstExecutionsIsStillReadByKey() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabase.URL);
        config.setMaximumPoolSize(1);
        try (HikariDataSource one = new HikariDataSource(config)) {
            RunStore store = new RunStore(one, schema);
            RunAttempts attempts = new RunAttempts(one, schema, MAX_DELIVERIES);
            for (int i = 0; i < 20; i++) { // the table is a page: a plan made now scans it
                runThrough(store, attempts, insert(store, 1));
            }
            for (int i = 0; i < 10; i++) {
                insert(store, 500);
            }
            for (int i = 0; i < 5; i++) {
                runThrough(store, attempts, insert(store, 3));
            }
            // Each run above was updated twice (started, done): once the statistics count 70 updates, they count
            // every scan too (one entry per table). A scan before the table grew read at most 20 rows, 40 of them
            // 800; one scan after it read 5,000 or more.
            try (Connection c = one.getConnection(); Statement st = c.createStatement()) {
                st.execute("SELECT pg_stat_force_next_flush()"); // else this session's counts wait up to 10 s
            } catch (java.sql.SQLException beforePostgres15) {
                // the wait below covers it
            }
            Wait.until("the statistics count the 70 updates", Duration.ofSeconds(30),
                    () -> statOfRuns("n_tup_upd") == 70);
            assertThat(statOfRuns("seq_tup_read")).as("rows read by scans of the runs table").isLessThan(1_000);
        }
    }

    private long statOfRuns(String column) {
        return TestDatabase.count("SELECT " + column + " FROM pg_stat_user_tables WHERE schemaname = '" + schema
                + "' AND relname = 'runs'");
    }

    /** 2,000 runs through pending → running → done, 100 at a time as the worker writes them, then 3 pending. */
    private List<UUID> aTableThatHasSeenWork(RunStore store, RunAttempts attempts) throws Exception {
        for (int i = 0; i < 20; i++) {
            runThrough(store, attempts, insert(store, 100));
        }
        List<UUID> pending = insert(store, 3);
        try (Connection c = TestDatabase.pool().getConnection(); Statement st = c.createStatement()) {
            st.execute("ANALYZE " + schema + ".runs");
        }
        return pending;
    }

    private static List<UUID> insert(RunStore store, int n) throws Exception {
        List<RunStore.Insert> inserts = new ArrayList<>();
        List<UUID> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            UUID id = UUID.randomUUID();
            ids.add(id);
            inserts.add(new RunStore.Insert(id, "key-" + id, "hash", NewRun.of("s", "u", "in")));
        }
        store.insertAll(inserts);
        return ids;
    }

    private static void runThrough(RunStore store, RunAttempts attempts, List<UUID> runs) throws Exception {
        List<RunAttempts.Request> requests = new ArrayList<>();
        List<RunStore.Completion> completions = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            requests.add(new RunAttempts.Request(runs.get(i), "1-" + i));
            completions.add(new RunStore.Completion(runs.get(i), List.of(Reply.assistant("ok"))));
        }
        assertThat(attempts.start(requests)).allMatch(s -> s instanceof RunAttempts.Started);
        assertThat(store.completeAll(completions)).allMatch(RunStore.Completed::completed);
    }

    /** The plans of {@code sql} for these arguments, generic and custom, find the runs by key alone. */
    private static void assertReadByKey(String sql, String... arguments) throws Exception {
        for (String mode : List.of("force_generic_plan", "force_custom_plan")) {
            String plan = plan(mode, sql, arguments);
            assertThat(plan).as(mode + ":\n" + plan).contains("runs_pkey")
                    .doesNotContain("runs_unfinished_idx").doesNotContain("runs_status_created_idx")
                    .doesNotContain("Seq Scan on runs");
        }
    }

    /** The plan of {@code sql} (with JDBC's ? parameters) for these arguments, as a prepared statement would get. */
    private static String plan(String planCacheMode, String sql, String... arguments) throws Exception {
        StringBuilder numbered = new StringBuilder();
        int n = 0;
        for (char ch : sql.toCharArray()) {
            numbered.append(ch == '?' ? "$" + ++n : String.valueOf(ch));
        }
        StringBuilder plan = new StringBuilder();
        try (Connection c = TestDatabase.pool().getConnection(); Statement st = c.createStatement()) {
            st.execute("SET plan_cache_mode = " + planCacheMode);
            st.execute("PREPARE hot_path AS " + numbered);
            try (ResultSet rs = st.executeQuery("EXPLAIN EXECUTE hot_path(" + String.join(", ", arguments) + ")")) {
                while (rs.next()) {
                    plan.append(rs.getString(1)).append('\n');
                }
            } finally {
                st.execute("DEALLOCATE hot_path");
                st.execute("RESET plan_cache_mode");
            }
        }
        return plan.toString();
    }

    private static String uuids(List<UUID> ids) {
        return arrayLiteral(ids.stream().map(UUID::toString).toList(), "uuid");
    }

    /** An array literal of {@code type} holding {@code element} once per run. */
    private static String sameForEach(List<UUID> runs, String element, String type) {
        return arrayLiteral(runs.stream().map(id -> element).toList(), type);
    }

    private static String arrayLiteral(List<String> elements, String type) {
        return "'{" + String.join(",", elements) + "}'::" + type + "[]";
    }
}
