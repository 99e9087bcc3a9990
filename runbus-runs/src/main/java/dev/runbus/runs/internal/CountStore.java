package dev.runbus.runs.internal;

import dev.runbus.runs.RunStatus;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.EnumMap;
import java.util.Map;
import javax.sql.DataSource;

/** The one query behind {@code RunCounts}: see migration V004 for the counters. */
public final class CountStore {

    private CountStore() {
    }

    /**
     * The statuses with a count. The unfinished half repeats the predicate of runs_unfinished_idx word for word,
     * so the planner can read the index instead of the table.
     */
    public static String sql(String schema) {
        return "SELECT status, count(*) FROM " + schema + ".runs WHERE status IN ('pending', 'running')"
                + " GROUP BY status"
                + " UNION ALL SELECT status, sum(n)::bigint FROM " + schema + ".run_counts GROUP BY status";
    }

    /** How long a count waits for PostgreSQL's answer. */
    static final int READ_TIMEOUT_MILLIS = 10_000;

    public static Map<RunStatus, Long> read(DataSource dataSource, String schema) throws SQLException {
        Map<RunStatus, Long> out = new EnumMap<>(RunStatus.class);
        try (Connection c = dataSource.getConnection()) {
            // A scrape must not wait out a long socket timeout when PostgreSQL stops answering mid-query (a
            // partition): this read gives up after READ_TIMEOUT_MILLIS. (The pool resets the timeout on return.)
            c.setNetworkTimeout(Runnable::run, READ_TIMEOUT_MILLIS);
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql(schema))) {
                while (rs.next()) {
                    out.merge(RunStatus.fromSql(rs.getString(1)), rs.getLong(2), Long::sum);
                }
            }
        }
        return out;
    }
}
