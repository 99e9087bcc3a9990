package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Runs#list} over many runs (docs/runs.md quotes what this prints for 1,000,000): the first page and a page
 * nine tenths deep read about one page of an index, with no sort and no scan of the table, unfiltered and filtered by a
 * user, by a rare status or by a rare session. The plans are asserted; the times are printed, not asserted, as they depend on the
 * machine.
 */
@Tag("slow")
@Timeout(600)
class RunListingScaleTest extends RunsTestSupport {

    /**
     * 100,000 in a build, where the plans are what is checked (an index range, no sort, no table scan); docs/runs.md's
     * figures are of 1,000,000: {@code -Drunbus.listing.runs=1000000}.
     */
    static final int RUNS = Integer.getInteger("runbus.listing.runs", 100_000);

    @Test
    void firstAndDeepPagesOfAMillionRunsReadOnlyAnIndexRange() throws Exception {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        long t = System.nanoTime();
        // Three runs per second of creation time (ties on created_at); a user has 1000 runs and, on 1,000,000, one
        // run in a thousand failed (one in a hundred on fewer, so that a deep page of them is still a full page).
        int users = RUNS / 1000;
        int failedEvery = RUNS >= 1_000_000 ? 1000 : 100;
        execute("INSERT INTO " + schema + ".runs (id, idempotency_key, input_hash, session_id, user_id, input, status,"
                + " attempts, created_at, updated_at) SELECT gen_random_uuid(), 'scale-' || i, 'h', 's' || (i % 5000),"
                + " 'u' || (i % " + users + "), 'x', CASE WHEN i % " + failedEvery + " = 0 THEN 'failed' ELSE 'done' END, 1,"
                + " timestamptz '2026-01-01' + (i / 3) * interval '1 second', now()"
                + " FROM generate_series(1, " + RUNS + ") i");
        execute("ANALYZE " + schema + ".runs");
        System.out.printf("inserted %,d runs in %d ms%n", RUNS, (System.nanoTime() - t) / 1_000_000);

        RunPosition deep = positionOf(RUNS / 10 * 9);
        report("first page, no filter", runs, RunQuery.newest());
        report("page " + RUNS / 10 * 9 + " runs deep, no filter", runs, RunQuery.newest().after(deep));
        report("first page of user u7", runs, RunQuery.newest().withUser("u7"));
        report("user u7 after the deep position", runs, RunQuery.newest().withUser("u7").after(deep));
        report("first page of failed runs", runs, RunQuery.newest().withStatus(RunStatus.FAILED));
        report("failed runs after the deep position", runs, RunQuery.newest().withStatus(RunStatus.FAILED).after(deep));
        report("first page of session s7", runs, RunQuery.newest().withSession("s7"));
        report("session s7 after the deep position", runs, RunQuery.newest().withSession("s7").after(deep));
    }

    /** The position of the {@code n}th newest run (1-based), as a page ending there would hand out. */
    private RunPosition positionOf(int n) throws Exception {
        try (Connection c = TestDatabase.pool().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT created_at, id FROM " + schema + ".runs ORDER BY created_at DESC,"
                     + " id DESC OFFSET " + (n - 1) + " LIMIT 1")) {
            assertThat(rs.next()).isTrue();
            return new RunPosition(rs.getTimestamp(1).toInstant(), rs.getObject(2, UUID.class));
        }
    }

    private void report(String what, Runs runs, RunQuery q) throws Exception {
        runs.list(q); // warm: the first call of a statement also plans it and reads the pages in
        long t = System.nanoTime();
        RunPage page = runs.list(q);
        double callMs = (System.nanoTime() - t) / 1e6;
        if (q.sessionId() == null) {
            assertThat(page.runs()).hasSize(q.limit());
        } else { // a session is rare: one run in 5000, fewer than a page on 100,000
            assertThat(page.runs()).isNotEmpty();
        }
        String plan = explainAnalyze(q);
        System.out.printf("%s: Runs.list %.2f ms; EXPLAIN ANALYZE:%n%s%n", what, callMs, plan);
        if (q.sessionId() == null) {
            assertThat(plan).contains("Index Scan Backward").doesNotContain("Seq Scan").doesNotContain("Sort");
        } else {
            // Without its index a session walked the created index past every other run. With it, a session of few
            // runs may be read whole and sorted (a bitmap scan): a sort of that session's runs only.
            assertThat(plan).contains("runs_session_created_idx").doesNotContain("Seq Scan");
        }
    }

    /** The statement Runs.list runs, with its parameters written in. */
    private String explainAnalyze(RunQuery q) throws Exception {
        StringBuilder sql = new StringBuilder("SELECT * FROM " + schema + ".runs WHERE true");
        if (q.status() != null) {
            sql.append(" AND status = '").append(q.status().sql()).append("'");
        }
        if (q.userId() != null) {
            sql.append(" AND user_id = '").append(q.userId()).append("'");
        }
        if (q.sessionId() != null) { // as RunListing writes it, the partial index's predicate repeated
            sql.append(" AND session_id = '").append(q.sessionId()).append("' AND octet_length(session_id) <= ")
                    .append(NewRun.MAX_ID_BYTES);
        }
        if (q.after() != null) {
            sql.append(" AND (created_at, id) < ('").append(q.after().createdAt()).append("', '")
                    .append(q.after().id()).append("')");
        }
        sql.append(" ORDER BY created_at DESC, id DESC LIMIT ").append(q.limit() + 1);
        StringBuilder plan = new StringBuilder();
        try (Connection c = TestDatabase.pool().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("EXPLAIN (ANALYZE, BUFFERS) " + sql)) {
            while (rs.next()) {
                plan.append("    ").append(rs.getString(1)).append('\n');
            }
        }
        return plan.toString();
    }

}
