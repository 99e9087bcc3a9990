package dev.runbus.runs.internal.store;

import dev.runbus.runs.RunStatus;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.EnumMap;
import java.util.Map;
import javax.sql.DataSource;

/** The one query behind {@code RunCounts}: see migrations V004 and V005 for the counters. */
public final class CountStore {

    /** The counter of failed runs that name no dead letter (V005), kept in run_counts beside the statuses. */
    public static final String FAILED_WITHOUT_DEAD_LETTER = "failed-without-dead-letter";

    /** The counts: each status's, and {@link #FAILED_WITHOUT_DEAD_LETTER}'s (a part of the failed). */
    public record Counts(Map<RunStatus, Long> byStatus, long failedWithoutDeadLetter) {
    }

    private CountStore() {
    }

    /**
     * The statuses with a count. The unfinished half repeats the predicate of runs_unfinished_idx word for word,
     * so the planner can read the index instead of the table; a running run with a cancel request counts as
     * cancelling.
     */
    public static String sql(String schema) {
        return "SELECT " + RunRows.STATUS + ", count(*) FROM " + schema + ".runs"
                + " WHERE status IN ('pending', 'running') GROUP BY 1"
                + " UNION ALL SELECT status, sum(n)::bigint FROM " + schema + ".run_counts GROUP BY status";
    }

    /** How long a count waits for PostgreSQL's answer. */
    static final int READ_TIMEOUT_MILLIS = 10_000;

    public static Counts read(DataSource dataSource, String schema) throws SQLException {
        Map<RunStatus, Long> out = new EnumMap<>(RunStatus.class);
        long failedWithoutDeadLetter = 0;
        try (Connection c = dataSource.getConnection()) {
            // A scrape must not wait out a long socket timeout when PostgreSQL stops answering mid-query (a
            // partition): this read gives up after READ_TIMEOUT_MILLIS. (The pool resets the timeout on return.)
            c.setNetworkTimeout(Runnable::run, READ_TIMEOUT_MILLIS);
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql(schema))) {
                while (rs.next()) {
                    if (FAILED_WITHOUT_DEAD_LETTER.equals(rs.getString(1))) {
                        failedWithoutDeadLetter += rs.getLong(2);
                    } else {
                        out.merge(RunStatus.fromSql(rs.getString(1)), rs.getLong(2), Long::sum);
                    }
                }
            }
        }
        return new Counts(out, failedWithoutDeadLetter);
    }
}
