package dev.runbus.server;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;

/** What a demo ended with, read from PostgreSQL (the truth) and Redis, as a table and one JSON line. */
public record DemoReport(long runs, long done, long failed, long deadLettered, long duplicateSubmissionsAbsorbed,
                         long redeliveries, long duplicateReplies, double p50Millis, double p99Millis,
                         double elapsedSeconds) {

    /** Replies each done run must have (the demo handler writes two); failed runs must have none. */
    static final int REPLIES_PER_RUN = 2;

    static long[] statusCounts(DataSource db, String schema) throws SQLException {
        try (Connection c = db.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*), count(*) FILTER (WHERE status = 'done'),"
                     + " count(*) FILTER (WHERE status = 'failed') FROM " + schema + ".runs")) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
        }
    }

    static DemoReport read(DataSource db, String schema, long deadLettered, long absorbed, double elapsedSeconds)
            throws SQLException {
        long[] counts = statusCounts(db, schema);
        try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
            long redeliveries;
            try (ResultSet rs = st.executeQuery("SELECT coalesce(sum(greatest(attempts - 1, 0)), 0) FROM " + schema
                    + ".runs")) {
                rs.next();
                redeliveries = rs.getLong(1);
            }
            long extraReplies;
            try (ResultSet rs = st.executeQuery("SELECT coalesce(sum(greatest(coalesce(m.n, 0) - CASE r.status WHEN"
                    + " 'done' THEN " + REPLIES_PER_RUN + " ELSE 0 END, 0)), 0) FROM " + schema + ".runs r LEFT JOIN"
                    + " (SELECT run_id, count(*) n FROM " + schema + ".messages GROUP BY run_id) m ON m.run_id = r.id")) {
                rs.next();
                extraReplies = rs.getLong(1);
            }
            double p50;
            double p99;
            try (ResultSet rs = st.executeQuery("SELECT coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 0),"
                    + " coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms), 0) FROM (SELECT extract(epoch FROM"
                    + " finished_at - created_at) * 1000 AS ms FROM " + schema + ".runs WHERE status = 'done') t")) {
                rs.next();
                p50 = rs.getDouble(1);
                p99 = rs.getDouble(2);
            }
            return new DemoReport(counts[0], counts[1], counts[2], deadLettered, absorbed, redeliveries, extraReplies,
                    p50, p99, elapsedSeconds);
        }
    }

    Map<String, Object> asMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("runs", runs);
        m.put("done", done);
        m.put("failed", failed);
        m.put("dead_lettered", deadLettered);
        m.put("duplicate_submissions_absorbed", duplicateSubmissionsAbsorbed);
        m.put("redeliveries", redeliveries);
        m.put("duplicate_replies", duplicateReplies);
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
