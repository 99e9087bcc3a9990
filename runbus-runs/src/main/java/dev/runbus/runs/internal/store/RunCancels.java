package dev.runbus.runs.internal.store;

import dev.runbus.runs.RunStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The cancel statement: a pending run becomes cancelled, final. Its trigger may still be in the stream; the
 * worker's start statement takes only the sources of running (pending, running), so it finds no run to start and
 * acks the trigger, and the sweeper looks only at pending and running runs, so it never republishes it.
 */
public final class RunCancels {

    private final DataSource dataSource;
    private final String sql;

    public RunCancels(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.sql = "UPDATE " + schema + ".runs SET status = '" + RunStatus.CANCELLED.sql() + "',"
                + " next_attempt_at = NULL, finished_at = now(), updated_at = now()"
                + " WHERE id = ? AND status IN (" + RunStore.sources(RunStatus.CANCELLED) + ") RETURNING scheduled_id";
    }

    /**
     * What a cancel did: whether the run was pending and is now cancelled, and where its delayed trigger waits in
     * the delay set, if it has one.
     */
    public record Cancelled(boolean done, Optional<String> scheduledId) {
    }

    public Cancelled cancel(UUID runId) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, runId);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Cancelled(true, Optional.ofNullable(rs.getString(1)))
                        : new Cancelled(false, Optional.empty());
            }
        }
    }
}
