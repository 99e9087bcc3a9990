package dev.runbus.runs.internal.worker;

import dev.runbus.runs.RunStatus;
import dev.runbus.runs.internal.store.Expiry;
import dev.runbus.runs.internal.store.RunStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The attempt start of a run in per-user order: one statement that starts the run only if no run of its user
 * submitted before it (lower {@code submit_seq}, migration V002) is pending or running, and otherwise names the
 * earliest such run, the blocker. One statement, so the check and the start see one snapshot; what can change
 * behind it only unblocks (an earlier run finishing), except a replay, which may send an earlier run back to
 * pending after a later one started (documented on {@code RunsConfig.ordered}). The same statement caps the
 * run's attempts by PostgreSQL's count, as {@link RunAttempts} does for unordered runs, and starts no retry
 * before the run's {@code next_attempt_at} by PostgreSQL's clock ({@link NotDue}).
 */
public final class OrderedAttempts {

    /** What a trigger found. */
    public sealed interface Start permits Started, Blocked, Worn, NotDue, GaveUp, Finished {
    }

    /** The attempt started: the run is running, with one more attempt. */
    public record Started(RunStore.Attempt attempt) implements Start {
    }

    /**
     * Nothing started: {@code blocker}, submitted before the run by the same user, is unfinished.
     *
     * @param attemptLive the blocker is running on a stream entry it still names; false when it is pending, or
     *                    running without an entry (the sweeper republished it: its attempt is lost and its new
     *                    trigger is somewhere behind)
     */
    public record Blocked(UUID runId, String userId, UUID blocker, RunStatus blockerStatus, boolean attemptLive)
            implements Start {
    }

    /**
     * Nothing started: the run may start, but its trigger has been delivered more often than the run has had
     * attempts since its last replay ({@code attempt > attempts + 1}), so earlier deliveries of it were spent
     * waiting (or on a consumer that died before starting). Starting on it would leave the run fewer failures
     * before the bus dead-letters it than {@code maxDeliveries}: its trigger is to be published afresh instead.
     */
    public record Worn(UUID runId, String userId) implements Start {
    }

    /**
     * Nothing started: the run may start, but its failed attempt's retry is not due yet: its
     * {@code next_attempt_at} is {@code millisLeft} ahead of PostgreSQL's clock ({@code now()}). A partition that
     * changed owner during the backoff hands its new owner the trigger at once; the run must not start before the
     * delay the retry policy gave it.
     */
    public record NotDue(UUID runId, long millisLeft) implements Start {
    }

    /**
     * Nothing started: the run already had {@code maxDeliveries} attempts since its last replay, by PostgreSQL's
     * count (a trigger republished after Redis lost its delivery count). It is failed now, with {@code reason}
     * as its error, whatever runs of its user are unfinished: it will not execute again, so order is kept.
     */
    public record GaveUp(UUID runId, String reason) implements Start {
    }

    /**
     * The run is done, failed, cancelled or unknown: nothing to do (the short-circuit); or it had a cancel request
     * and is cancelled now.
     */
    public record Finished() implements Start {
    }

    private static final String UNFINISHED = "('" + RunStatus.PENDING.sql() + "', '" + RunStatus.RUNNING.sql() + "')";

    private final DataSource dataSource;
    private final int maxDeliveries;
    private final String sql;
    /** The statement for the bus's run alone, which may have one attempt more (see {@link RunAttempts.Request}). */
    private final String sqlAlone;

    public OrderedAttempts(DataSource dataSource, String schema, int maxDeliveries) {
        this.dataSource = dataSource;
        this.maxDeliveries = maxDeliveries;
        this.sql = statement(schema + ".runs", maxDeliveries, maxDeliveries);
        this.sqlAlone = statement(schema + ".runs", maxDeliveries, maxDeliveries + 1);
    }

    /** The statement of {@link #start} for runs that may have {@code cap} attempts. */
    private static String statement(String runs, int maxDeliveries, int cap) {
        String left = "t.attempts - t.attempts_at_replay < " + cap; // cap is an int
        // The blocker is read through runs_user_unfinished_idx (user_id, submit_seq), whose predicate is this
        // literal list of statuses. The two updates take disjoint rows (left or not left, on one snapshot).
        String due = "(t.next_attempt_at IS NULL OR t.next_attempt_at <= now())";
        // A pending run past its expiry (V017) is no target (it is expired below) and blocks no one: it never
        // starts, whenever its own trigger or the sweeper marks it.
        return "WITH target AS (SELECT id, user_id, submit_seq, attempts, attempts_at_replay, error,"
                + " next_attempt_at FROM " + runs
                + " WHERE id = ? AND status IN " + UNFINISHED + " AND cancel_requested_at IS NULL AND NOT "
                + Expiry.overdue(runs) + "),"
                + " blocker AS (SELECT e.id, e.status, e.stream_id FROM " + runs + " e JOIN target t"
                + " ON e.user_id = t.user_id WHERE e.submit_seq < t.submit_seq AND e.status IN " + UNFINISHED
                + " AND NOT " + Expiry.overdue("e") + " ORDER BY e.submit_seq LIMIT 1),"
                + " started AS (UPDATE " + runs + " r SET status = '" + RunStatus.RUNNING.sql() + "',"
                + " attempts = r.attempts + 1, stream_id = ?, next_attempt_at = NULL, updated_at = now(),"
                + " started_at = COALESCE(r.started_at, now()) FROM target t WHERE r.id = t.id"
                + " AND r.status IN (" + RunStore.sources(RunStatus.RUNNING) + ") AND NOT EXISTS (SELECT 1 FROM blocker)"
                + " AND ? <= t.attempts - t.attempts_at_replay + 1 AND " + left + " AND " + due
                // Checked on the row as updated too: two starts at once (an old lease holder and the new owner)
                // read one snapshot, and only conditions on r are checked again after the other's update.
                + " AND r.attempts - r.attempts_at_replay < " + cap
                + " RETURNING r.id, r.idempotency_key, r.session_id, r.user_id, r.input, r.attempts, r.timeout_ms),"
                + " gave_up AS (UPDATE " + runs + " r SET status = '" + RunStatus.FAILED.sql() + "',"
                + " error = 'gave up after ' || (t.attempts - t.attempts_at_replay) || ' attempts (maxDeliveries "
                + maxDeliveries + ")' || COALESCE('; last error: ' || t.error, ''),"
                + " next_attempt_at = NULL, finished_at = now(), updated_at = now() FROM target t WHERE r.id = t.id"
                + " AND r.status IN (" + RunStore.sources(RunStatus.FAILED) + ") AND NOT (" + left + ")"
                + " RETURNING r.id, r.user_id, r.error),"
                // A run with a cancel request (its attempt's worker died while it was cancelling; V016) is not
                // started again but cancelled. It is no target, so nothing above touches it.
                + " cancelled AS (UPDATE " + runs + " r SET status = '" + RunStatus.CANCELLED.sql() + "',"
                + " next_attempt_at = NULL, finished_at = now(), updated_at = now() WHERE r.id = ?"
                + " AND r.status = '" + RunStatus.RUNNING.sql() + "' AND r.cancel_requested_at IS NOT NULL"
                + " RETURNING r.id),"
                + " expired AS (UPDATE " + runs + " r SET status = '" + RunStatus.EXPIRED.sql() + "',"
                + " error = " + Expiry.error("r") + ", next_attempt_at = NULL, finished_at = now(),"
                + " updated_at = now() WHERE r.id = ? AND " + Expiry.overdue("r") + " RETURNING r.id)"
                + " SELECT 'started', s.id, s.idempotency_key, s.session_id, s.user_id, s.input, s.attempts, NULL,"
                + " NULL, s.timeout_ms FROM started s"
                + " UNION ALL SELECT 'gave_up', g.id, NULL, NULL, g.user_id, NULL, 0, NULL, g.error, NULL"
                + " FROM gave_up g"
                + " UNION ALL SELECT 'cancelled', c.id, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL FROM cancelled c"
                + " UNION ALL SELECT 'expired', x.id, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL FROM expired x"
                + " UNION ALL SELECT 'blocked', b.id, NULL, NULL, t.user_id, NULL, 0, b.status, b.stream_id, NULL"
                + " FROM blocker b, target t WHERE " + left
                + " UNION ALL SELECT 'worn', t.id, NULL, NULL, t.user_id, NULL, 0, NULL, NULL, NULL FROM target t"
                + " WHERE NOT EXISTS (SELECT 1 FROM blocker) AND ? > t.attempts - t.attempts_at_replay + 1 AND " + left
                // Whole milliseconds, rounded up, so that a wait of that long finds it due.
                + " UNION ALL SELECT 'not_due', t.id, NULL, NULL, t.user_id, NULL,"
                + " CEIL(EXTRACT(EPOCH FROM t.next_attempt_at - now()) * 1000)::int, NULL, NULL, NULL FROM target t"
                + " WHERE NOT EXISTS (SELECT 1 FROM blocker) AND ? <= t.attempts - t.attempts_at_replay + 1 AND " + left
                + " AND NOT " + due;
    }

    /**
     * Starts an attempt of {@code runId} on stream entry {@code streamId}, whose delivery is the bus's attempt
     * {@code attempt} at the trigger ({@code Delivery.attempt()}), or says why not.
     */
    public Start start(UUID runId, String streamId, long attempt) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(attempt > maxDeliveries ? sqlAlone : sql)) {
            ps.setObject(1, runId);
            ps.setString(2, streamId);
            ps.setLong(3, attempt);
            ps.setObject(4, runId);
            ps.setObject(5, runId);
            ps.setLong(6, attempt);
            ps.setLong(7, attempt);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return new Finished();
                }
                String kind = rs.getString(1);
                if (kind.equals("cancelled") || kind.equals("expired")) {
                    return new Finished();
                }
                if (kind.equals("gave_up")) {
                    return new GaveUp(runId, rs.getString(9));
                }
                if (kind.equals("worn")) {
                    return new Worn(runId, rs.getString(5));
                }
                if (kind.equals("not_due")) {
                    return new NotDue(runId, Math.max(1, rs.getInt(7)));
                }
                if (kind.equals("started")) {
                    return new Started(new RunStore.Attempt(rs.getObject(2, UUID.class), rs.getString(3),
                            rs.getString(4), rs.getString(5), rs.getString(6), rs.getInt(7),
                            RunStore.Attempt.timeoutOf(rs, 10)));
                }
                RunStatus status = RunStatus.fromSql(rs.getString(8));
                return new Blocked(runId, rs.getString(5), rs.getObject(2, UUID.class), status,
                        status == RunStatus.RUNNING && rs.getString(9) != null);
            }
        }
    }
}
