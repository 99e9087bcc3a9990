package dev.runbus.runs.internal;

import dev.runbus.runs.RunStatus;
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

/** The sweeper's SQL: its lock, its candidates, its republish marks and its checkpoint. */
final class SweeperStore {

    /** An unfinished run the sweeper looks at. */
    record Candidate(UUID runId, RunStatus status, String streamId, Instant updatedAt) {
    }

    private final String runs;
    private final String sweeperState;

    SweeperStore(String schema) {
        this.runs = schema + ".runs";
        this.sweeperState = schema + ".sweeper_state";
    }

    /** Takes the sweeper's lock for the transaction of {@code c}; false when another process holds it. */
    boolean trySweeperLock(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_xact_lock(hashtext(?))")) {
            ps.setString(1, "runbus.sweeper." + runs);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /** Unfinished runs untouched for {@code threshold}, oldest first, locked for this transaction. */
    List<Candidate> candidates(Connection c, Duration threshold, int limit) throws SQLException {
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

    void markRepublished(Connection c, List<UUID> ids) throws SQLException {
        // The old stream entry is gone or acked; without it the sweeper judges the run by its new trigger.
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET republished = republished + 1,"
                + " stream_id = NULL, updated_at = now() WHERE id = ANY (?)")) {
            ps.setArray(1, c.createArrayOf("uuid", ids.toArray()));
            ps.executeUpdate();
        }
    }

    Optional<String> sweeperValue(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT value FROM " + sweeperState + " WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
            }
        }
    }

    void setSweeperValue(Connection c, String name, String value) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + sweeperState + " (name, value) VALUES (?, ?)"
                + " ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value")) {
            ps.setString(1, name);
            ps.setString(2, value);
            ps.executeUpdate();
        }
    }

}
