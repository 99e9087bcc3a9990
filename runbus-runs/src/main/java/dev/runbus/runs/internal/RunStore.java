package dev.runbus.runs.internal;

import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.Run;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.StoredReply;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * Every SQL statement of the runs layer. Each status change is written as
 * {@code UPDATE ... WHERE status IN (legal sources)} with the sources taken from {@link RunStatus}, so an
 * illegal transition changes no row.
 */
public final class RunStore {

    /** Who holds an idempotency key. */
    public record KeyOwner(UUID runId, String bodyHash, RunStatus status) {
    }

    /** A run as an attempt starts it. */
    public record Attempt(UUID runId, String idempotencyKey, String sessionId, String userId, String input,
                          int attempt) {
    }

    /** An unfinished run the sweeper looks at. */
    public record Candidate(UUID runId, RunStatus status, String streamId, Instant updatedAt) {
    }

    /** A recorded effect: its key and, once the call returned, its result. */
    public record EffectRow(String idempotencyKey, Optional<String> result) {
    }

    private final DataSource dataSource;
    private final String runs;
    private final String messages;
    private final String effects;
    private final String sweeperState;

    public RunStore(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.runs = schema + ".runs";
        this.messages = schema + ".messages";
        this.effects = schema + ".run_effects";
        this.sweeperState = schema + ".sweeper_state";
    }

    public DataSource dataSource() {
        return dataSource;
    }

    // ------------------------------------------------------------------ submit (guard 1)

    /** INSERT ... ON CONFLICT (idempotency_key) DO NOTHING; true when this call created the run. */
    public boolean insert(UUID id, String key, String bodyHash, NewRun r) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO " + runs
                     + " (id, idempotency_key, input_hash, session_id, user_id, input, status) VALUES (?, ?, ?, ?, ?, ?, ?)"
                     + " ON CONFLICT (idempotency_key) DO NOTHING")) {
            ps.setObject(1, id);
            ps.setString(2, key);
            ps.setString(3, bodyHash);
            ps.setString(4, r.sessionId());
            ps.setString(5, r.userId());
            ps.setString(6, r.input());
            ps.setString(7, RunStatus.PENDING.sql());
            return ps.executeUpdate() == 1;
        }
    }

    public Optional<KeyOwner> findByKey(String key) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT id, input_hash, status FROM " + runs + " WHERE idempotency_key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new KeyOwner(rs.getObject(1, UUID.class), rs.getString(2),
                        RunStatus.fromSql(rs.getString(3)))) : Optional.empty();
            }
        }
    }

    // ------------------------------------------------------------------ attempts

    /**
     * pending|running → running with one more attempt, remembering the stream entry of this attempt.
     * Empty when the run is done, failed or unknown: the short-circuit.
     */
    public Optional<Attempt> startAttempt(UUID id, String streamId) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET status = ?, attempts = attempts + 1,"
                     + " stream_id = ?, updated_at = now(), started_at = COALESCE(started_at, now())"
                     + " WHERE id = ? AND status IN (" + sources(RunStatus.RUNNING) + ")"
                     + " RETURNING idempotency_key, session_id, user_id, input, attempts")) {
            ps.setString(1, RunStatus.RUNNING.sql());
            ps.setString(2, streamId);
            ps.setObject(3, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new Attempt(id, rs.getString(1), rs.getString(2), rs.getString(3),
                        rs.getString(4), rs.getInt(5))) : Optional.empty();
            }
        }
    }

    /**
     * In one transaction: lock the run, and if it is still running insert the replies (ON CONFLICT (run_id,
     * seq) DO NOTHING, guard 2) and set it done. The lock makes a second execution that finishes later see
     * "done" and write nothing, so replies are never a mix of two executions. Returns whether this call
     * completed the run.
     */
    public boolean complete(UUID id, List<Reply> replies) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                RunStatus now;
                try (PreparedStatement ps = c.prepareStatement("SELECT status FROM " + runs + " WHERE id = ? FOR UPDATE")) {
                    ps.setObject(1, id);
                    try (ResultSet rs = ps.executeQuery()) {
                        now = rs.next() ? RunStatus.fromSql(rs.getString(1)) : null;
                    }
                }
                if (now == null || !now.canMoveTo(RunStatus.DONE)) {
                    c.rollback();
                    return false;
                }
                if (!replies.isEmpty()) {
                    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + messages
                            + " (run_id, seq, role, content) VALUES (?, ?, ?, ?) ON CONFLICT (run_id, seq) DO NOTHING")) {
                        int seq = 1;
                        for (Reply r : replies) {
                            ps.setObject(1, id);
                            ps.setInt(2, seq++);
                            ps.setString(3, r.role());
                            ps.setString(4, r.content());
                            ps.addBatch();
                        }
                        ps.executeBatch();
                    }
                }
                try (PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET status = ?, error = NULL,"
                        + " finished_at = now(), updated_at = now() WHERE id = ? AND status IN ("
                        + sources(RunStatus.DONE) + ")")) {
                    ps.setString(1, RunStatus.DONE.sql());
                    ps.setObject(2, id);
                    ps.executeUpdate();
                }
                c.commit();
                return true;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    /** Keeps the last failure's reason on a running run (its status does not change). */
    public void recordFailure(UUID id, String error) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET error = ?, updated_at = now()"
                     + " WHERE id = ? AND status = ?")) {
            ps.setString(1, error);
            ps.setObject(2, id);
            ps.setString(3, RunStatus.RUNNING.sql());
            ps.executeUpdate();
        }
    }

    /** pending|running → failed, naming the dead letter. Returns whether the run changed. */
    public boolean markFailed(Connection c, UUID id, String reason, String deadLetterId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET status = ?, error = ?,"
                + " dead_letter_id = ?, finished_at = now(), updated_at = now() WHERE id = ? AND status IN ("
                + sources(RunStatus.FAILED) + ")")) {
            ps.setString(1, RunStatus.FAILED.sql());
            ps.setString(2, reason);
            ps.setString(3, deadLetterId);
            ps.setObject(4, id);
            return ps.executeUpdate() == 1;
        }
    }

    public boolean markFailed(UUID id, String reason, String deadLetterId) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return markFailed(c, id, reason, deadLetterId);
        }
    }

    /**
     * failed → pending (the one way out of failed). Returns the dead letter id the run had (may be null);
     * empty when the run was not failed.
     */
    public Optional<Optional<String>> beginReplay(UUID id) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " r SET status = ?, error = NULL,"
                     + " dead_letter_id = NULL, finished_at = NULL, updated_at = now()"
                     + " FROM (SELECT id, dead_letter_id FROM " + runs + " WHERE id = ? FOR UPDATE) old"
                     + " WHERE r.id = old.id AND r.status IN (" + sources(RunStatus.PENDING) + ")"
                     + " RETURNING old.dead_letter_id")) {
            ps.setString(1, RunStatus.PENDING.sql());
            ps.setObject(2, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(Optional.ofNullable(rs.getString(1))) : Optional.empty();
            }
        }
    }

    // ------------------------------------------------------------------ reads

    public Optional<Run> get(UUID id) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT id, idempotency_key, session_id, user_id, input, status,"
                     + " attempts, error, dead_letter_id, republished, created_at, updated_at FROM " + runs
                     + " WHERE id = ?")) {
            ps.setObject(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new Run(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                        rs.getString(4), rs.getString(5), RunStatus.fromSql(rs.getString(6)), rs.getInt(7),
                        Optional.ofNullable(rs.getString(8)), Optional.ofNullable(rs.getString(9)), rs.getInt(10),
                        rs.getTimestamp(11).toInstant(), rs.getTimestamp(12).toInstant()));
            }
        }
    }

    public List<StoredReply> replies(UUID id) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT seq, role, content, created_at FROM " + messages
                     + " WHERE run_id = ? ORDER BY seq")) {
            ps.setObject(1, id);
            List<StoredReply> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new StoredReply(rs.getInt(1), rs.getString(2), rs.getString(3),
                            rs.getTimestamp(4).toInstant()));
                }
            }
            return out;
        }
    }

    // ------------------------------------------------------------------ effects

    /** Commits the "initiated" row; false when the effect was initiated before. */
    public boolean initiateEffect(UUID runId, String name, String key) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO " + effects + " (run_id, name, idempotency_key)"
                     + " VALUES (?, ?, ?) ON CONFLICT (run_id, name) DO NOTHING")) {
            ps.setObject(1, runId);
            ps.setString(2, name);
            ps.setString(3, key);
            return ps.executeUpdate() == 1;
        }
    }

    public Optional<EffectRow> effect(UUID runId, String name) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT idempotency_key, result, completed_at FROM " + effects
                     + " WHERE run_id = ? AND name = ?")) {
            ps.setObject(1, runId);
            ps.setString(2, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                boolean completed = rs.getTimestamp(3) != null;
                return Optional.of(new EffectRow(rs.getString(1),
                        completed ? Optional.of(rs.getString(2)) : Optional.empty()));
            }
        }
    }

    public void completeEffect(UUID runId, String name, String result) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + effects + " SET result = ?, completed_at = now()"
                     + " WHERE run_id = ? AND name = ?")) {
            ps.setString(1, result);
            ps.setObject(2, runId);
            ps.setString(3, name);
            ps.executeUpdate();
        }
    }

    // ------------------------------------------------------------------ sweeper

    /** Takes the sweeper's lock for the transaction of {@code c}; false when another process holds it. */
    public boolean trySweeperLock(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_xact_lock(hashtext(?))")) {
            ps.setString(1, "runbus.sweeper." + runs);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /** Unfinished runs untouched for {@code threshold}, oldest first, locked for this transaction. */
    public List<Candidate> candidates(Connection c, Duration threshold, int limit) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT id, status, stream_id, updated_at FROM " + runs
                + " WHERE status IN (?, ?) AND updated_at < now() - ? * interval '1 millisecond'"
                + " ORDER BY updated_at LIMIT ? FOR UPDATE SKIP LOCKED")) {
            ps.setString(1, RunStatus.PENDING.sql());
            ps.setString(2, RunStatus.RUNNING.sql());
            ps.setLong(3, threshold.toMillis());
            ps.setInt(4, limit);
            List<Candidate> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Timestamp t = rs.getTimestamp(4);
                    out.add(new Candidate(rs.getObject(1, UUID.class), RunStatus.fromSql(rs.getString(2)),
                            rs.getString(3), t.toInstant()));
                }
            }
            return out;
        }
    }

    public void markRepublished(Connection c, List<UUID> ids) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET republished = republished + 1,"
                + " updated_at = now() WHERE id = ANY (?)")) {
            ps.setArray(1, c.createArrayOf("uuid", ids.toArray()));
            ps.executeUpdate();
        }
    }

    public Optional<String> sweeperValue(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT value FROM " + sweeperState + " WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
            }
        }
    }

    public void setSweeperValue(Connection c, String name, String value) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + sweeperState + " (name, value) VALUES (?, ?)"
                + " ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value")) {
            ps.setString(1, name);
            ps.setString(2, value);
            ps.executeUpdate();
        }
    }

    private static String sources(RunStatus target) {
        return RunStatus.sourcesOf(target).stream().map(s -> "'" + s.sql() + "'").collect(Collectors.joining(", "));
    }
}
