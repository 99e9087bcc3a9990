package dev.runbus.runs.internal.sweep;

import dev.runbus.runs.RunStatus;
import dev.runbus.runs.internal.store.Expiry;
import dev.runbus.runs.internal.store.RunFlow;
import dev.runbus.runs.internal.store.RunStore;
import dev.runbus.runs.internal.worker.Triggers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The sweeper's SQL: its lock, its candidates, its republish marks and its small named values (checkpoints).
 * Candidates are read without row locks: the sweeper asks Redis about them, and a completion must not wait for
 * that. Marking then takes only the runs unchanged since they were read.
 */
public final class SweeperStore {

    /**
     * An unfinished run the sweeper examines, as it was when read; {@code userId} chooses its partition when
     * triggers are keyed; {@code nextAttemptAt} (null: none) is when the bus's retry of its failed attempt was due.
     */
    record Candidate(UUID runId, RunStatus status, String streamId, Instant updatedAt, String userId,
                     Instant nextAttemptAt, RunFlow flow) {

        String flowKey() {
            return flow.key();
        }

        Cursor cursor() {
            return new Cursor(updatedAt, runId);
        }
    }

    /** A run marked republished: its trigger is to be published again, keyed by its user when runs are ordered. */
    record Republish(UUID runId, String userId, long submitSeq) {
    }

    /** Where the sweeper's next page of candidates starts: after this run, in (updated_at, id) order. */
    record Cursor(Instant updatedAt, UUID runId) {

        String text() {
            return updatedAt + " " + runId;
        }

        static Optional<Cursor> parse(String text) {
            String[] parts = text.split(" ");
            return parts.length != 2 ? Optional.empty()
                    : Optional.of(new Cursor(Instant.parse(parts[0]), UUID.fromString(parts[1])));
        }
    }

    /**
     * The statuses of an unfinished run, as literals: the partial index on updated_at of unfinished runs (V001)
     * matches a literal list under a generic plan too, where bound parameters would not.
     */
    private static final String UNFINISHED = "('" + RunStatus.PENDING.sql() + "', '" + RunStatus.RUNNING.sql() + "')";

    private final String runs;
    private final String sweeperState;

    SweeperStore(String schema) {
        this.runs = schema + ".runs";
        this.sweeperState = schema + ".sweeper_state";
    }

    /**
     * pending → expired for up to {@code max} runs past their expiry (V017), oldest expiry first, skipping rows
     * another statement holds (an attempt start decides those). Read through runs_unfinished_idx, whose predicate
     * the status test implies: a scan of the backlog, once a sweep. Returns how many.
     */
    int expireOverdue(Connection c, int max) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " r SET status = '"
                + RunStatus.EXPIRED.sql() + "', error = " + Expiry.error("r") + ", next_attempt_at = NULL,"
                + " finished_at = now(), updated_at = now() WHERE r.id IN (SELECT x.id FROM " + runs + " x WHERE "
                + Expiry.overdue("x") + " ORDER BY x.expires_at LIMIT ? FOR UPDATE SKIP LOCKED)"
                + " AND " + Expiry.overdue("r"))) {
            ps.setInt(1, max);
            return ps.executeUpdate();
        }
    }

    /**
     * Takes the sweeper's lock for the session of {@code c}; false when another process holds it. A session
     * lock, not a transaction's, so that the sweep can commit its short transactions on the same connection
     * while it holds the lock (and needs only one connection of the pool). Losing the connection frees it.
     */
    boolean trySweeperLock(Connection c) throws SQLException {
        return sweeperLock(c, "pg_try_advisory_lock");
    }

    void releaseSweeperLock(Connection c) throws SQLException {
        sweeperLock(c, "pg_advisory_unlock");
    }

    private boolean sweeperLock(Connection c, String function) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + function + "(hashtext(?))")) {
            ps.setString(1, "runbus.sweeper." + runs);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /**
     * Up to {@code limit} unfinished runs untouched for {@code threshold}, in (updated_at, id) order after
     * {@code after} (from the oldest when empty). No row is locked. A run whose failed attempt the bus retries
     * later ({@code next_attempt_at}) is left alone until that retry is overdue by {@code threshold} too: its
     * trigger waits in the delay set, acknowledged, where {@link Liveness} does not look, and republishing it
     * would execute the run once more (and spend an attempt of its budget).
     */
    List<Candidate> candidates(Connection c, Duration threshold, Optional<Cursor> after, int limit)
            throws SQLException {
        // "updated_at >= ?" lets the index start the scan at the cursor (the row comparison alone would only
        // filter), and equal times are ordered by id in a small sort.
        try (PreparedStatement ps = c.prepareStatement("SELECT id, status, stream_id, updated_at, user_id,"
                + " next_attempt_at, flow_key, priority, flow_sub_key FROM " + runs
                + " WHERE status IN " + UNFINISHED
                + " AND updated_at < now() - ? * interval '1 millisecond'"
                + " AND (next_attempt_at IS NULL OR next_attempt_at < now() - ? * interval '1 millisecond')"
                + (after.isPresent() ? " AND updated_at >= ? AND (updated_at, id) > (?, ?)" : "")
                + " ORDER BY updated_at, id LIMIT ?")) {
            int i = 1;
            ps.setLong(i++, threshold.toMillis());
            ps.setLong(i++, threshold.toMillis());
            if (after.isPresent()) {
                OffsetDateTime at = OffsetDateTime.ofInstant(after.get().updatedAt(), ZoneOffset.UTC);
                ps.setObject(i++, at);
                ps.setObject(i++, at);
                ps.setObject(i++, after.get().runId());
            }
            ps.setInt(i, limit);
            List<Candidate> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    OffsetDateTime next = rs.getObject(6, OffsetDateTime.class);
                    out.add(new Candidate(rs.getObject(1, UUID.class), RunStatus.fromSql(rs.getString(2)),
                            rs.getString(3), rs.getObject(4, OffsetDateTime.class).toInstant(), rs.getString(5),
                            next == null ? null : next.toInstant(), RunStore.flowOf(rs, 7)));
                }
            }
            return out;
        }
    }

    /**
     * Counts a republish of each candidate that is still unfinished and unchanged since it was read (same
     * {@code updated_at}: every write to a run sets it), and forgets its old stream entry, which is gone or
     * acked (the sweeper then judges the run by its new trigger), and the time its retry was due: the new
     * trigger comes now. Returns the runs it marked: only those may
     * be republished, in submission order.
     */
    List<Republish> markRepublished(Connection c, List<Candidate> lost) throws SQLException {
        Object[] ids = new Object[lost.size()];
        String[] readAt = new String[lost.size()];
        for (int i = 0; i < lost.size(); i++) {
            ids[i] = lost.get(i).runId();
            readAt[i] = lost.get(i).updatedAt().toString(); // ISO-8601 in UTC, to the microsecond PostgreSQL keeps
        }
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " r SET republished = r.republished + 1,"
                + " stream_id = NULL, next_attempt_at = NULL, outbox = NULL, updated_at = now()"
                + " FROM unnest(?::uuid[], ?::timestamptz[]) AS v(id, read_at)"
                + " WHERE r.id = ANY (?::uuid[]) AND r.id = v.id AND r.updated_at = v.read_at"
                + " AND r.status IN " + UNFINISHED + " RETURNING r.id, r.user_id, r.submit_seq")) {
            ps.setArray(1, c.createArrayOf("uuid", ids));
            ps.setArray(2, c.createArrayOf("text", readAt));
            ps.setArray(3, c.createArrayOf("uuid", ids));
            List<Republish> marked = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    marked.add(new Republish(rs.getObject(1, UUID.class), rs.getString(2), rs.getLong(3)));
                }
            }
            // An earlier run's trigger first: in per-user order a later run's trigger would only defer behind it.
            marked.sort(java.util.Comparator.comparingLong(Republish::submitSeq));
            return marked;
        }
    }

    Optional<String> value(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT value FROM " + sweeperState + " WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
            }
        }
    }

    /** The values of those of {@code names} that are set, by name. */
    Map<String, String> values(Connection c, List<String> names) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT name, value FROM " + sweeperState
                + " WHERE name = ANY (?::text[])")) {
            ps.setArray(1, c.createArrayOf("text", names.toArray()));
            Map<String, String> out = new HashMap<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getString(2));
                }
            }
            return out;
        }
    }

    void setValue(Connection c, String name, String value) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + sweeperState + " (name, value) VALUES (?, ?)"
                + " ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value")) {
            ps.setString(1, name);
            ps.setString(2, value);
            ps.executeUpdate();
        }
    }
}
