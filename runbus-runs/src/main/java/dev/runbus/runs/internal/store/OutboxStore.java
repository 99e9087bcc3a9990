package dev.runbus.runs.internal.store;

import dev.runbus.runs.IdempotencyConflictException;
import dev.runbus.runs.InvalidRunException;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.RunStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Runs submitted in a caller's transaction (migration V014): written by the schema's {@code submit_run} function
 * on the caller's connection, marked {@code outbox} until a relay publishes their triggers, which it claims here.
 */
public final class OutboxStore {

    /** What {@code submit_run} answered: the run holding the key, whether this call created it, its status. */
    public record Submitted(UUID runId, boolean created, RunStatus status) {
    }

    /** A run whose trigger a relay claimed to publish: its user (the key of an ordered run's trigger) and its flow. */
    /** A run whose trigger the relay publishes: after {@code delay} when it was submitted delayed, else at once. */
    public record Claimed(UUID runId, String userId, RunFlow flow, java.time.Duration delay) {
    }

    private final String schema;
    private final String claimSql;

    public OutboxStore(String schema) {
        this.schema = schema;
        String runs = schema + ".runs";
        this.claimSql = "UPDATE " + runs + " r SET outbox = NULL WHERE r.id IN (SELECT id FROM " + runs
                + " WHERE outbox ORDER BY created_at LIMIT ? FOR UPDATE SKIP LOCKED)"
                + " RETURNING r.id, r.user_id, r.flow_key, r.priority, r.flow_sub_key,"
                + " GREATEST(0, CEIL(EXTRACT(EPOCH FROM r.next_attempt_at - now()) * 1000))::bigint";
    }

    /**
     * The NOTIFY channel of the schema's relay: {@code runbus_runs_} and the first 16 hex digits of the SHA-256 of
     * the schema's name, as {@code submit_run} computes it (a channel name has at most 63 bytes).
     */
    public static String channel(String schema) {
        return "runbus_runs_" + IdempotencyKeys.sha256Hex(schema).substring(0, 16);
    }

    /**
     * Submits {@code run} on {@code c}, in whatever transaction it is in, with its key compared in {@code scope}
     * (null: global).
     *
     * @throws IdempotencyConflictException when the key names a run with another body
     * @throws InvalidRunException          when the function refuses an argument
     */
    public Submitted submit(Connection c, NewRun run, String scope) throws SQLException {
        return submit(c, run, scope, java.time.Duration.ZERO);
    }

    /** {@link #submit(Connection, NewRun, String)} of a run due {@code delay} after its creation. */
    public Submitted submit(Connection c, NewRun run, String scope, java.time.Duration delay) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT run_id, created, status FROM " + schema
                + ".submit_run(?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, run.sessionId());
            ps.setString(2, run.userId());
            ps.setString(3, run.input());
            ps.setString(4, run.idempotencyKey());
            ps.setString(5, run.flowKey());
            if (run.priority() == dev.runbus.Message.DEFAULT_PRIORITY) {
                ps.setNull(6, Types.INTEGER);
            } else {
                ps.setInt(6, run.priority());
            }
            ps.setString(7, run.flowSubKey());
            ps.setString(8, scope);
            Submitted submitted;
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                submitted = new Submitted(rs.getObject(1, UUID.class), rs.getBoolean(2),
                        RunStatus.fromSql(rs.getString(3)));
            }
            if (submitted.created() && (run.expireAfter() != null || run.timeout() != null || !delay.isZero())) {
                limits(c, submitted.runId(), run, delay);
            }
            return submitted;
        } catch (SQLException e) {
            if ("RB409".equals(e.getSQLState())) {
                throw new IdempotencyConflictException(run.idempotencyKey() != null ? run.idempotencyKey()
                        : "(derived)", UUID.fromString(detailOf(e)));
            }
            if ("RB400".equals(e.getSQLState())) {
                String message = messageOf(e);
                int colon = message.indexOf(':');
                throw new InvalidRunException(colon > 0 ? message.substring(0, colon) : "run",
                        colon > 0 ? message.substring(colon + 1).trim() : message);
            }
            throw e;
        }
    }

    /**
     * The run's expiry, timeout and due time, which {@code submit_run} does not take: written in the same transaction,
     * so the relay, which publishes only after the commit, never sees the run without them. A delayed run's
     * {@code next_attempt_at} is its due time, as {@code Runs.submit} writes it: the relay schedules its trigger for
     * then, and the sweeper leaves it alone until it is overdue.
     */
    private void limits(Connection c, UUID runId, NewRun run, java.time.Duration delay) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".runs SET"
                + " expires_at = created_at + ?::bigint * interval '1 millisecond', timeout_ms = ?,"
                + " next_attempt_at = CASE WHEN ?::bigint > 0 THEN created_at + ?::bigint * interval '1 millisecond'"
                + " END WHERE id = ?")) {
            ps.setObject(1, run.expireAfter() == null ? null : run.expireAfter().toMillis(), Types.BIGINT);
            ps.setObject(2, run.timeout() == null ? null : run.timeout().toMillis(), Types.BIGINT);
            ps.setLong(3, delay.toMillis());
            ps.setLong(4, delay.toMillis());
            ps.setObject(5, runId);
            ps.executeUpdate();
        }
    }

    /** Records where a delayed run's trigger waits in the delay set (for {@code Runs.cancel}), in {@code tx}. */
    public void scheduled(Connection tx, UUID runId, String scheduledId) throws SQLException {
        try (PreparedStatement ps = tx.prepareStatement("UPDATE " + schema + ".runs SET scheduled_id = ?"
                + " WHERE id = ?")) {
            ps.setString(1, scheduledId);
            ps.setObject(2, runId);
            ps.executeUpdate();
        }
    }

    /**
     * Claims up to {@code max} runs whose triggers wait for a relay, oldest first, in {@code c}'s transaction: their
     * mark is cleared when it commits, and rows another relay holds are skipped.
     */
    public List<Claimed> claim(Connection c, int max) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(claimSql)) {
            ps.setInt(1, max);
            List<Claimed> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Claimed(rs.getObject(1, UUID.class), rs.getString(2), RunStore.flowOf(rs, 3),
                            java.time.Duration.ofMillis(rs.getLong(6))));
                }
            }
            return out;
        }
    }

    private static String detailOf(SQLException e) {
        if (e instanceof org.postgresql.util.PSQLException p && p.getServerErrorMessage() != null) {
            return p.getServerErrorMessage().getDetail();
        }
        throw new IllegalStateException("submit_run named no run in its conflict: " + e.getMessage(), e);
    }

    private static String messageOf(SQLException e) {
        if (e instanceof org.postgresql.util.PSQLException p && p.getServerErrorMessage() != null) {
            return p.getServerErrorMessage().getMessage();
        }
        return String.valueOf(e.getMessage());
    }
}
