package dev.runbus.runs.internal.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/** Running runs' progress (migration V015): the latest report of each, written in one statement for many runs. */
public final class ProgressStore {

    /** A run's latest report: 0 to 100 and its details (null: none), already cleaned. */
    public record Report(UUID runId, int percent, String details) {
    }

    private final DataSource dataSource;
    private final String sql;

    public ProgressStore(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.sql = "UPDATE " + schema + ".runs r SET progress_percent = v.p, progress_details = v.d,"
                + " progress_at = now() FROM unnest(?::uuid[], ?::smallint[], ?::text[]) AS v(id, p, d)"
                + " WHERE r.id = v.id AND r.status = 'running'";
    }

    /** Writes the reports of runs still running (a run that ended meanwhile keeps what it had). */
    public void write(List<Report> reports) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setArray(1, c.createArrayOf("uuid", reports.stream().map(Report::runId).toArray()));
            ps.setArray(2, c.createArrayOf("smallint", reports.stream().map(r -> (short) r.percent()).toArray()));
            ps.setArray(3, c.createArrayOf("text", reports.stream().map(Report::details).toArray()));
            ps.executeUpdate();
        }
    }
}
