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
 * The cancel statement. A run with no handler at work, pending or running between attempts (waiting for a retry:
 * {@code next_attempt_at} is set), becomes cancelled, final. A running run gets a cancel request
 * ({@code cancel_requested_at}, migration V016): it is cancelling, and the end of its attempt, or any trigger of it
 * that comes later, makes it cancelled ({@code RunAttempts}, {@code OrderedAttempts}, {@code RunStore.completeAll},
 * {@code RunFailures}). In the same transaction the statement NOTIFYs the schema's cancel channel with the run's id,
 * delivered at commit to the workers ({@code HandlerWatch}), which tell the handler.
 *
 * <p>A cancelled run's trigger may still be in the stream; the worker's start statement finds no run to start and
 * acks it, and the sweeper looks only at pending and running runs, so it never republishes it.
 */
public final class RunCancels {

    private final DataSource dataSource;
    private final String sql;
    private final String channel;

    public RunCancels(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.channel = channel(schema);
        String idle = "(status = '" + RunStatus.PENDING.sql() + "' OR next_attempt_at IS NOT NULL)";
        // In SET, columns are read as they were before the update.
        this.sql = "WITH c AS (UPDATE " + schema + ".runs SET"
                + " status = CASE WHEN " + idle + " THEN '" + RunStatus.CANCELLED.sql() + "' ELSE status END,"
                + " finished_at = CASE WHEN " + idle + " THEN now() ELSE finished_at END,"
                + " cancel_requested_at = COALESCE(cancel_requested_at, now()), next_attempt_at = NULL,"
                + " updated_at = now()"
                + " WHERE id = ? AND status IN ('" + RunStatus.PENDING.sql() + "', '" + RunStatus.RUNNING.sql() + "')"
                + " RETURNING id, status, scheduled_id)"
                + " SELECT c.status, c.scheduled_id, pg_notify(?, c.id::text) FROM c";
    }

    /**
     * The NOTIFY channel of the schema's cancel requests: {@code runbus_cancel_} and the first 16 hex digits of the
     * SHA-256 of the schema's name (a channel name has at most 63 bytes).
     */
    public static String channel(String schema) {
        return "runbus_cancel_" + IdempotencyKeys.sha256Hex(schema).substring(0, 16);
    }

    /**
     * What a cancel did: whether the run was pending or running (and so is cancelled or cancelling now), its status
     * then, and where its delayed trigger waits in the delay set, if it has one.
     */
    public record Cancelled(boolean done, RunStatus status, Optional<String> scheduledId) {
    }

    public Cancelled cancel(UUID runId) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, runId);
            ps.setString(2, channel);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return new Cancelled(false, null, Optional.empty());
                }
                RunStatus status = RunStatus.fromSql(rs.getString(1));
                return new Cancelled(true, status == RunStatus.RUNNING ? RunStatus.CANCELLING : status,
                        Optional.ofNullable(rs.getString(2)));
            }
        }
    }
}
