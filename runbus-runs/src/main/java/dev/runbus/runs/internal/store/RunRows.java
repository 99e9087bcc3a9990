package dev.runbus.runs.internal.store;

import dev.runbus.runs.Run;
import dev.runbus.runs.RunStatus;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.Optional;
import java.util.UUID;

/** The columns a {@link Run} is read from, and the reading, shared by every query that returns runs. */
final class RunRows {

    /**
     * The status as the API sees it: a running row with a cancel request (migration V016) is cancelling
     * ({@link RunStatus}).
     */
    static final String STATUS = "CASE WHEN status = 'running' AND cancel_requested_at IS NOT NULL"
            + " THEN 'cancelling' ELSE status END";

    /** In the order {@link #read} expects them. */
    static final String COLUMNS = "id, idempotency_key, session_id, user_id, input, " + STATUS + ", attempts, error,"
            + " dead_letter_id, republished, created_at, updated_at, next_attempt_at, progress_percent,"
            + " progress_details, progress_at, expires_at, timeout_ms";

    /**
     * {@link #COLUMNS} for a listing: the input (up to the body limit, 64 KiB over HTTP) and the idempotency key
     * are read as empty texts, since no listing shows them, so a page costs what it shows.
     */
    static final String LISTED_COLUMNS = "id, '' AS idempotency_key, session_id, user_id, '' AS input, " + STATUS
            + ", attempts,"
            + " error, dead_letter_id, republished, created_at, updated_at, next_attempt_at, progress_percent,"
            + " progress_details, progress_at, expires_at, timeout_ms";

    private RunRows() {
    }

    static Run read(ResultSet rs) throws SQLException {
        return new Run(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                rs.getString(4), rs.getString(5), RunStatus.fromSql(rs.getString(6)), rs.getInt(7),
                Optional.ofNullable(ErrorText.clean(rs.getString(8))), Optional.ofNullable(rs.getString(9)),
                rs.getInt(10), rs.getTimestamp(11).toInstant(), rs.getTimestamp(12).toInstant(),
                Optional.ofNullable(rs.getTimestamp(13)).map(Timestamp::toInstant), progressOf(rs),
                Optional.ofNullable(rs.getTimestamp(17)).map(Timestamp::toInstant),
                Optional.ofNullable(RunStore.Attempt.timeoutOf(rs, 18)));
    }

    private static Optional<dev.runbus.runs.Progress> progressOf(ResultSet rs) throws SQLException {
        Timestamp at = rs.getTimestamp(16);
        if (at == null) {
            return Optional.empty();
        }
        return Optional.of(new dev.runbus.runs.Progress(rs.getShort(14), ErrorText.clean(rs.getString(15)),
                at.toInstant()));
    }
}
