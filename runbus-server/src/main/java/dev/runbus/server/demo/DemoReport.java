package dev.runbus.server.demo;

import dev.runbus.server.Json;
import dev.runbus.server.Table;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * What a demo ended with, read from PostgreSQL (the truth) and Redis, next to what its {@link DemoPlan} says
 * it must end with, as a table and one JSON line. Every figure that can show a broken guarantee is measured
 * from the stored rows, not taken from the code that should have made it right.
 *
 * @param runs                     runs stored
 * @param done                     runs done
 * @param failed                   runs failed
 * @param poisonRuns               runs the plan made poison: exactly these must fail
 * @param deadLettered             entries in the topic's dead-letter stream
 * @param duplicateSubmissions     submissions the plan repeated with an earlier key
 * @param duplicateSubmissionsAbsorbed submissions answered with an existing run (guard 1)
 * @param redeliveries             executions beyond each run's first (PostgreSQL's attempts)
 * @param runsOffPlan              planned runs missing or ending otherwise than planned: a poison run not
 *                                 failed, another not done, a flaky one done without a retry
 * @param runsWithWrongReplies     runs whose reply rows are not exactly one execution's set: a done run
 *                                 without exactly {@value #REPLIES_PER_RUN} replies numbered from 1 written
 *                                 in one transaction (guard 2), or a failed run with any reply
 * @param orderViolations          runs in per-user order only (empty otherwise): runs whose first attempt started
 *                                 before a run of the same user submitted earlier (lower {@code submit_seq})
 *                                 had finished; must be 0
 */
public record DemoReport(long runs, long done, long failed, long poisonRuns, long deadLettered,
                         long duplicateSubmissions, long duplicateSubmissionsAbsorbed, long redeliveries,
                         long runsOffPlan, long runsWithWrongReplies, java.util.OptionalLong orderViolations,
                         double p50Millis, double p99Millis, double elapsedSeconds) {

    /** Replies each done run must have (the demo handler writes two on every attempt); failed runs have none. */
    public static final int REPLIES_PER_RUN = 2;

    static long[] statusCounts(DataSource db, String schema) throws SQLException {
        try (Connection c = db.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*), count(*) FILTER (WHERE status = 'done'),"
                     + " count(*) FILTER (WHERE status = 'failed') FROM " + schema + ".runs")) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
        }
    }

    /** A report without the order figure (runs not ordered). */
    public static DemoReport read(DataSource db, String schema, DemoPlan plan, long deadLettered, long absorbed,
                           double elapsedSeconds) throws SQLException {
        return read(db, schema, plan, deadLettered, absorbed, false, elapsedSeconds);
    }

    /** @param ordered the runs were in per-user order: measure {@link #orderViolations} */
    public static DemoReport read(DataSource db, String schema, DemoPlan plan, long deadLettered, long absorbed,
                           boolean ordered, double elapsedSeconds) throws SQLException {
        long[] counts = statusCounts(db, schema);
        try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
            long redeliveries = single(st, "SELECT coalesce(sum(greatest(attempts - 1, 0)), 0) FROM " + schema
                    + ".runs");
            long wrongReplies = single(st, wrongRepliesQuery(schema));
            long offPlan = offPlan(c, schema, plan);
            java.util.OptionalLong order = ordered ? java.util.OptionalLong.of(single(st, orderViolationsQuery(schema)))
                    : java.util.OptionalLong.empty();
            double p50;
            double p99;
            try (ResultSet rs = st.executeQuery("SELECT coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 0),"
                    + " coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms), 0) FROM (SELECT extract(epoch FROM"
                    + " finished_at - created_at) * 1000 AS ms FROM " + schema + ".runs WHERE status = 'done') t")) {
                rs.next();
                p50 = rs.getDouble(1);
                p99 = rs.getDouble(2);
            }
            return new DemoReport(counts[0], counts[1], counts[2], plan.poisonRuns(), deadLettered,
                    plan.duplicates(), absorbed, redeliveries, offPlan, wrongReplies, order, p50, p99, elapsedSeconds);
        }
    }

    /**
     * One execution writes its replies in the statement that sets the run done, so they share one transaction
     * and so one {@code created_at} ({@code now()} is the transaction's start). Rows with two timestamps, a
     * count other than the handler's, or a gap in the numbering are not one execution's set.
     */
    private static String wrongRepliesQuery(String schema) {
        return "SELECT count(*) FROM " + schema + ".runs r LEFT JOIN (SELECT run_id, count(*) n, min(seq) lo,"
                + " max(seq) hi, count(DISTINCT created_at) writes FROM " + schema + ".messages GROUP BY run_id) m"
                + " ON m.run_id = r.id WHERE CASE WHEN r.status = 'done' THEN coalesce(m.n, 0) <> " + REPLIES_PER_RUN
                + " OR m.lo <> 1 OR m.hi <> " + REPLIES_PER_RUN + " OR m.writes <> 1 ELSE coalesce(m.n, 0) <> 0 END";
    }

    /**
     * Runs whose first attempt ({@code started_at}) began before some run of the same user submitted earlier
     * had finished (done or failed: {@code finished_at}; an unfinished one counts as never finished). A window
     * over each user's runs in submission order keeps it one pass, however many runs a user has.
     */
    static String orderViolationsQuery(String schema) {
        return "SELECT count(*) FROM (SELECT started_at, max(coalesce(finished_at, 'infinity'::timestamptz))"
                + " OVER (PARTITION BY user_id ORDER BY submit_seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)"
                + " AS earlier_finished FROM " + schema + ".runs) r"
                + " WHERE r.started_at IS NOT NULL AND r.started_at < r.earlier_finished";
    }

    /** Planned runs that are missing or ended otherwise than planned, plus stored runs the plan never made. */
    private static long offPlan(Connection c, String schema, DemoPlan plan) throws SQLException {
        List<String> keys = new ArrayList<>();
        List<String> statuses = new ArrayList<>();
        List<Integer> minAttempts = new ArrayList<>();
        for (DemoPlan.Submission s : plan.runs()) {
            keys.add(s.run().idempotencyKey());
            statuses.add(s.poison() ? "failed" : "done");
            // A flaky input fails its first attempt, so it can only be done on a later one.
            minAttempts.add(s.flaky() ? 2 : 1);
        }
        Array keyArray = c.createArrayOf("text", keys.toArray());
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FILTER (WHERE r.id IS NULL OR r.status <>"
                + " p.status OR r.attempts < p.min_attempts) + (SELECT count(*) FROM " + schema + ".runs WHERE NOT"
                + " idempotency_key = ANY (?)) FROM unnest(?::text[], ?::text[], ?::int[]) AS p(key, status,"
                + " min_attempts) LEFT JOIN " + schema + ".runs r ON r.idempotency_key = p.key")) {
            ps.setArray(1, keyArray);
            ps.setArray(2, keyArray);
            ps.setArray(3, c.createArrayOf("text", statuses.toArray()));
            ps.setArray(4, c.createArrayOf("int4", minAttempts.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static long single(Statement st, String sql) throws SQLException {
        try (ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The demo's promises that these figures break, each as a sentence; empty when all hold. */
    public List<String> brokenInvariants() {
        List<String> broken = new ArrayList<>();
        if (runsOffPlan != 0) {
            broken.add(runsOffPlan + " runs missing or ended otherwise than planned");
        }
        if (failed != poisonRuns || done != runs - poisonRuns) {
            broken.add(failed + " runs failed and " + done + " done of " + runs + "; planned " + poisonRuns
                    + " poison runs to fail and the rest to be done");
        }
        if (deadLettered != poisonRuns) {
            broken.add(deadLettered + " dead letters for " + poisonRuns + " poison runs");
        }
        if (duplicateSubmissionsAbsorbed != duplicateSubmissions) {
            broken.add(duplicateSubmissionsAbsorbed + " of " + duplicateSubmissions
                    + " duplicate submissions absorbed");
        }
        if (runsWithWrongReplies != 0) {
            broken.add(runsWithWrongReplies + " runs whose replies are not exactly one execution's "
                    + REPLIES_PER_RUN + ": exactly-once effects broken");
        }
        if (orderViolations.isPresent() && orderViolations.getAsLong() != 0) {
            broken.add(orderViolations.getAsLong() + " runs started before an earlier run of their user finished: "
                    + "per-user order broken");
        }
        return broken;
    }

    public Map<String, Object> asMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("runs", runs);
        m.put("done", done);
        m.put("failed", failed);
        m.put("poison_runs", poisonRuns);
        m.put("dead_lettered", deadLettered);
        m.put("duplicate_submissions", duplicateSubmissions);
        m.put("duplicate_submissions_absorbed", duplicateSubmissionsAbsorbed);
        m.put("redeliveries", redeliveries);
        m.put("runs_off_plan", runsOffPlan);
        m.put("runs_with_wrong_replies", runsWithWrongReplies);
        orderViolations.ifPresent(v -> m.put("order_violations", v));
        m.put("p50_submit_to_done_ms", Math.round(p50Millis * 10) / 10.0);
        m.put("p99_submit_to_done_ms", Math.round(p99Millis * 10) / 10.0);
        m.put("elapsed_s", Math.round(elapsedSeconds * 100) / 100.0);
        return m;
    }

    public void printTo(java.io.PrintWriter out) {
        Table t = new Table("measure", "value");
        asMap().forEach(t::row);
        t.print(out);
        out.println(Json.write(asMap()));
    }
}
