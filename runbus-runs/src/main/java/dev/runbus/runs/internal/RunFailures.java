package dev.runbus.runs.internal;

import dev.runbus.runs.RunStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SQL of a run's failures and replays: a handler's error and the time of its next attempt kept on the
 * run, the run failed by its dead letter, and the replay that sends it back (with a fresh budget of attempts).
 * Like every status change, each is written {@code WHERE status IN (legal sources)} with the sources taken from
 * {@link RunStatus}.
 *
 * <p>A dead letter fails its run only while the run's current attempt is the dead-lettered entry
 * ({@code stream_id}): no clock is compared. So a late or duplicate mark cannot undo a replay (which clears
 * {@code stream_id}), nor fail a run that has since started an attempt on another trigger.
 */
public final class RunFailures {

    private static final Logger log = LoggerFactory.getLogger(RunFailures.class);

    /** What a replay found: the run was failed, its user, and its dead letter if it had one. */
    public record Replay(boolean began, String userId, Optional<String> deadLetterId) {

        static final Replay NOT_FAILED = new Replay(false, null, Optional.empty());
    }

    private final DataSource dataSource;
    private final String runs;
    private final int maxDeliveries;

    /** @param maxDeliveries the runs' attempts between two replays (RunsConfig.workerOptions) */
    public RunFailures(DataSource dataSource, String schema, int maxDeliveries) {
        this.dataSource = dataSource;
        this.runs = schema + ".runs";
        this.maxDeliveries = maxDeliveries;
    }

    /**
     * Keeps the last failure's reason on a running run (its status does not change), and when its next attempt
     * is due: {@code retryIn} from now, if the bus will retry it ({@code retryIn} present) and PostgreSQL's count
     * leaves it an attempt (fewer than {@code maxDeliveries} since its last replay); otherwise none.
     */
    public void recordFailure(UUID id, String error, Optional<Duration> retryIn) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET error = ?, updated_at = now(),"
                     + " next_attempt_at = CASE WHEN ?::bigint IS NOT NULL AND attempts - attempts_at_replay < ?"
                     + " THEN now() + ?::bigint * interval '1 millisecond' END"
                     + " WHERE id = ? AND status = ?")) {
            Long millis = retryIn.map(Duration::toMillis).orElse(null);
            ps.setString(1, error);
            ps.setObject(2, millis, Types.BIGINT);
            ps.setInt(3, maxDeliveries);
            ps.setObject(4, millis, Types.BIGINT);
            ps.setObject(5, id);
            ps.setString(6, RunStatus.RUNNING.sql());
            ps.executeUpdate();
        }
    }

    /**
     * Keeps the reason of a failed execution on the run, as a courtesy, and when its next attempt is due (see
     * {@link #recordFailure}): a failure to write it is logged and added to {@code failure} as suppressed, never
     * thrown, so that it never replaces the failure itself.
     */
    public void recordQuietly(UUID id, Throwable failure, Optional<Duration> retryIn) {
        try {
            recordFailure(id, failure.getClass().getName() + ": " + failure.getMessage(), retryIn);
        } catch (SQLException | RuntimeException e) {
            log.warn("could not record the failure of run {}", id, e);
            if (e != failure) {
                failure.addSuppressed(e);
            }
        }
    }

    /**
     * → failed, naming the dead letter, if the run's current attempt is {@code deadStreamId} (the stream
     * entry that was dead-lettered). Returns whether the run changed.
     */
    public boolean markFailed(Connection c, UUID id, String reason, String deadLetterId, String deadStreamId)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET status = ?, error = ?,"
                + " dead_letter_id = ?, next_attempt_at = NULL, finished_at = now(), updated_at = now()"
                + " WHERE id = ? AND stream_id = ?"
                + " AND status IN (" + RunStore.sources(RunStatus.FAILED) + ")")) {
            ps.setString(1, RunStatus.FAILED.sql());
            ps.setString(2, reason);
            ps.setString(3, deadLetterId);
            ps.setObject(4, id);
            ps.setString(5, deadStreamId);
            return ps.executeUpdate() == 1;
        }
    }

    public boolean markFailed(UUID id, String reason, String deadLetterId, String deadStreamId) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return markFailed(c, id, reason, deadLetterId, deadStreamId);
        }
    }

    /**
     * failed → pending (the one way out of failed), forgetting the failed attempt's stream entry so that no
     * mark of its dead letter can fail the run again, and giving it a fresh budget of attempts: the cap counts
     * from {@code attempts_at_replay}.
     */
    public Replay beginReplay(UUID id) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return beginReplay(c, id);
        }
    }

    /** {@link #beginReplay(UUID)} on the caller's connection, inside the caller's transaction. */
    public Replay beginReplay(Connection c, UUID id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " r SET status = ?, error = NULL,"
                     + " dead_letter_id = NULL, stream_id = NULL, finished_at = NULL, next_attempt_at = NULL,"
                     + " attempts_at_replay = r.attempts, updated_at = now()"
                     + " FROM (SELECT id, dead_letter_id FROM " + runs + " WHERE id = ? FOR UPDATE) old"
                     + " WHERE r.id = old.id AND r.status IN (" + RunStore.sources(RunStatus.PENDING) + ")"
                     + " RETURNING r.user_id, old.dead_letter_id")) {
            ps.setString(1, RunStatus.PENDING.sql());
            ps.setObject(2, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Replay(true, rs.getString(1), Optional.ofNullable(rs.getString(2)))
                        : Replay.NOT_FAILED;
            }
        }
    }
}
