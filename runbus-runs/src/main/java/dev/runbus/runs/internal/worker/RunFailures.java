package dev.runbus.runs.internal.worker;

import dev.runbus.runs.internal.store.RunFlow;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.internal.store.ErrorText;
import dev.runbus.runs.internal.store.RunStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
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

    /**
     * What a replay found: the run was failed, its user, flow key and priority, and its dead letter if it had one.
     */
    public record Replay(boolean began, String userId, RunFlow flow, Optional<String> deadLetterId,
                         Before before) {

        static final Replay NOT_FAILED = new Replay(false, null, RunFlow.NONE, Optional.empty(), null);
    }

    /** What a replay changed, to put back if its Redis step is refused ({@link #undoReplay}). */
    public record Before(int attempts, String error, String deadLetterId, String streamId, Timestamp finishedAt,
                         Timestamp nextAttemptAt, int attemptsAtReplay) {
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
     * leaves it an attempt (fewer than {@code maxDeliveries} since its last replay); otherwise none. A run whose
     * cancel was asked for (V016) is cancelled instead, never retried. Returns whether it was.
     */
    public boolean recordFailure(UUID id, String error, Optional<Duration> retryIn) throws SQLException {
        String asked = "cancel_requested_at IS NOT NULL";
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET error = ?, updated_at = now(),"
                     + " status = CASE WHEN " + asked + " THEN '" + RunStatus.CANCELLED.sql() + "' ELSE status END,"
                     + " finished_at = CASE WHEN " + asked + " THEN now() ELSE finished_at END,"
                     + " next_attempt_at = CASE WHEN " + asked + " THEN NULL"
                     + " WHEN ?::bigint IS NOT NULL AND attempts - attempts_at_replay < ?"
                     + " THEN now() + ?::bigint * interval '1 millisecond' END"
                     + " WHERE id = ? AND status = ? RETURNING status")) {
            Long millis = retryIn.map(Duration::toMillis).orElse(null);
            ps.setString(1, ErrorText.clean(error));
            ps.setObject(2, millis, Types.BIGINT);
            ps.setInt(3, maxDeliveries);
            ps.setObject(4, millis, Types.BIGINT);
            ps.setObject(5, id);
            ps.setString(6, RunStatus.RUNNING.sql());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && RunStatus.CANCELLED.sql().equals(rs.getString(1));
            }
        }
    }

    /**
     * running → cancelled after a failed attempt (the handler threw, or was interrupted) of a run whose cancel was
     * asked for (V016): it is never retried. Returns whether it did; false leaves the run as it was (no cancel was
     * asked for, or the run is no longer running). A failure to write it is logged and added to {@code failure}.
     */
    public boolean cancelIfRequested(UUID id, Throwable failure) {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET status = ?, error = ?,"
                     + " next_attempt_at = NULL, finished_at = now(), updated_at = now()"
                     + " WHERE id = ? AND status = ? AND cancel_requested_at IS NOT NULL")) {
            ps.setString(1, RunStatus.CANCELLED.sql());
            ps.setString(2, ErrorText.clean(failure.getClass().getName() + ": " + failure.getMessage()));
            ps.setObject(3, id);
            ps.setString(4, RunStatus.RUNNING.sql());
            return ps.executeUpdate() == 1;
        } catch (SQLException | RuntimeException e) {
            // The run's next trigger (a retry, a takeover) cancels it instead of running it (RunAttempts).
            log.warn("could not cancel run {} after its attempt failed; its next trigger will", id, e);
            failure.addSuppressed(e);
            return false;
        }
    }

    /**
     * Keeps the reason of a failed execution on the run, as a courtesy, and when its next attempt is due (see
     * {@link #recordFailure}): a failure to write it is logged and added to {@code failure} as suppressed, never
     * thrown, so that it never replaces the failure itself. Returns whether the run was cancelled instead (its
     * cancel was asked for): its trigger is then to be acked, not retried.
     */
    public boolean recordQuietly(UUID id, Throwable failure, Optional<Duration> retryIn) {
        try {
            return recordFailure(id, failure.getClass().getName() + ": " + failure.getMessage(), retryIn);
        } catch (SQLException | RuntimeException e) {
            log.warn("could not record the failure of run {}", id, e);
            if (e != failure) {
                failure.addSuppressed(e);
            }
            return false;
        }
    }

    /**
     * → failed, naming the dead letter, if the run's current attempt is {@code deadStreamId} (the stream
     * entry that was dead-lettered). Returns whether the run changed.
     */
    private boolean markFailed(Connection c, UUID id, String reason, String deadLetterId, String deadStreamId)
            throws SQLException {
        // A run with a cancel request (V016) ends cancelled, not failed: its cancel was asked for first.
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET status = CASE WHEN"
                + " cancel_requested_at IS NULL THEN ? ELSE '" + RunStatus.CANCELLED.sql() + "' END, error = ?,"
                + " dead_letter_id = ?, next_attempt_at = NULL, finished_at = now(), updated_at = now()"
                + " WHERE id = ? AND stream_id = ?"
                + " AND status IN (" + RunStore.sources(RunStatus.FAILED) + ")")) {
            ps.setString(1, RunStatus.FAILED.sql());
            ps.setString(2, ErrorText.clean(reason));
            ps.setString(3, deadLetterId);
            ps.setObject(4, id);
            ps.setString(5, deadStreamId);
            return ps.executeUpdate() == 1;
        }
    }

    /**
     * running → failed after the failure of the trigger's last allowed delivery, by the worker itself before its
     * handler call returns (ordered runs, {@link OrderedRunWorker}), if the run's current attempt is still
     * {@code streamId}. The bus dead-letters the trigger only after the call returns, so the run names no dead
     * letter yet: {@link #attachDeadLetter} names it then. Returns whether the run changed.
     */
    public boolean failLastAttempt(UUID id, String streamId, String reason) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            // A running run names no dead letter (a replay clears it): null leaves it as it is.
            return markFailed(c, id, reason, null, streamId);
        }
    }

    /**
     * Names the dead letter of a run that its worker failed before the bus moved the trigger
     * ({@link #failLastAttempt}): only while the run is failed on that very entry and names no dead letter yet. So,
     * like {@link #markFailed}, it changes nothing after a replay (which clears {@code stream_id}) or for a run
     * failed on another entry. No status changes. Returns whether the run changed.
     */
    private boolean attachDeadLetter(Connection c, UUID id, String deadLetterId, String deadStreamId)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET dead_letter_id = ?,"
                + " updated_at = now() WHERE id = ? AND stream_id = ? AND status = ? AND dead_letter_id IS NULL")) {
            ps.setString(1, deadLetterId);
            ps.setObject(2, id);
            ps.setString(3, deadStreamId);
            ps.setString(4, RunStatus.FAILED.sql());
            return ps.executeUpdate() == 1;
        }
    }

    /** What a dead letter did to its run. */
    public enum DeadLetterMark {
        /** The run was failed by it. */
        FAILED,
        /** The run, already failed on the dead-lettered entry by its worker, now names the dead letter. */
        ATTACHED,
        /** Nothing: the run is not on that entry (replayed, running on another trigger) or already names one. */
        UNCHANGED
    }

    /**
     * Applies a dead letter to its run: fails it ({@link #markFailed}) or, when its worker failed it already,
     * names the dead letter on it ({@link #attachDeadLetter}). The listener and the sweeper both use it.
     */
    public DeadLetterMark applyDeadLetter(Connection c, UUID id, String reason, String deadLetterId,
                                          String deadStreamId) throws SQLException {
        if (markFailed(c, id, reason, deadLetterId, deadStreamId)) {
            return DeadLetterMark.FAILED;
        }
        return attachDeadLetter(c, id, deadLetterId, deadStreamId) ? DeadLetterMark.ATTACHED : DeadLetterMark.UNCHANGED;
    }

    public DeadLetterMark applyDeadLetter(UUID id, String reason, String deadLetterId, String deadStreamId)
            throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return applyDeadLetter(c, id, reason, deadLetterId, deadStreamId);
        }
    }

    /**
     * failed → pending (the one way out of failed), forgetting the failed attempt's stream entry so that no
     * mark of its dead letter can fail the run again, and giving it a fresh budget of attempts: the cap counts
     * from {@code attempts_at_replay}.
     */
    public Replay beginReplay(UUID id) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " r SET status = ?, error = NULL,"
                     + " dead_letter_id = NULL, stream_id = NULL, finished_at = NULL, next_attempt_at = NULL,"
                     + " cancel_requested_at = NULL, attempts_at_replay = r.attempts, updated_at = now()"
                     + " FROM (SELECT id, attempts, error, dead_letter_id, stream_id, finished_at, next_attempt_at,"
                     + " attempts_at_replay FROM " + runs + " WHERE id = ? FOR UPDATE) old"
                     + " WHERE r.id = old.id AND r.status IN (" + RunStore.sources(RunStatus.PENDING) + ")"
                     + " RETURNING r.user_id, old.attempts, old.error, old.dead_letter_id, old.stream_id,"
                     + " old.finished_at, old.next_attempt_at, old.attempts_at_replay, r.flow_key, r.priority,"
                     + " r.flow_sub_key")) {
            ps.setString(1, RunStatus.PENDING.sql());
            ps.setObject(2, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Replay.NOT_FAILED;
                }
                Before before = new Before(rs.getInt(2), rs.getString(3), rs.getString(4), rs.getString(5),
                        rs.getTimestamp(6), rs.getTimestamp(7), rs.getInt(8));
                return new Replay(true, rs.getString(1), RunStore.flowOf(rs, 9),
                        Optional.ofNullable(before.deadLetterId()), before);
            }
        }
    }

    /**
     * Puts a run back as {@link #beginReplay} found it, if nothing started it meanwhile (still pending, same
     * attempts): for a replay whose Redis step was refused. Returns whether it did.
     */
    public boolean undoReplay(UUID id, Before before) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET status = ?, error = ?,"
                     + " dead_letter_id = ?, stream_id = ?, finished_at = ?, next_attempt_at = ?,"
                     + " attempts_at_replay = ?, updated_at = now() WHERE id = ? AND status = ? AND attempts = ?")) {
            ps.setString(1, RunStatus.FAILED.sql());
            ps.setString(2, before.error());
            ps.setString(3, before.deadLetterId());
            ps.setString(4, before.streamId());
            ps.setTimestamp(5, before.finishedAt());
            ps.setTimestamp(6, before.nextAttemptAt());
            ps.setInt(7, before.attemptsAtReplay());
            ps.setObject(8, id);
            ps.setString(9, RunStatus.PENDING.sql());
            ps.setInt(10, before.attempts());
            return ps.executeUpdate() == 1;
        }
    }
}
