package dev.runbus.runs.internal.store;

import dev.runbus.runs.NewRun;
import dev.runbus.runs.Run;
import dev.runbus.runs.RunPage;
import dev.runbus.runs.RunPosition;
import dev.runbus.runs.RunQuery;
import dev.runbus.runs.RunStatus;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The runs listing: newest first, by keyset on {@code (created_at, id)} (never an offset, which would read and
 * throw away every run before the page), over the indexes of migrations V006 and V009. One row more than the page is
 * read to know whether another page follows. Listed runs carry no input and no idempotency key
 * ({@link RunRows#LISTED_COLUMNS}).
 */
public final class RunListing {

    /**
     * The predicate of V009's partial index on sessions, repeated in the statement so that PostgreSQL may use the
     * index (it must prove the index's predicate from the query's); always true of a session filter, which
     * {@link RunQuery} bounds the same way.
     */
    static final String SESSION_INDEXED = "octet_length(session_id) <= " + NewRun.MAX_ID_BYTES;

    private final TimedReads reads;
    private final String runs;

    /** @param reads the runs layer's reads, under its read timeout */
    public RunListing(TimedReads reads, String schema) {
        this.reads = reads;
        this.runs = schema + ".runs";
    }

    /** The status column's value for {@code status}: a cancelling run is stored as running (migration V016). */
    private static String storedStatus(RunStatus status) {
        return (status == RunStatus.CANCELLING ? RunStatus.RUNNING : status).sql();
    }

    public RunPage list(RunQuery q) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT " + RunRows.LISTED_COLUMNS + " FROM " + runs + " WHERE true");
        List<Object> args = new ArrayList<>();
        filter(sql, args, q.status() == null ? null : storedStatus(q.status()), " AND status = ?");
        if (q.status() == RunStatus.RUNNING || q.status() == RunStatus.CANCELLING) {
            sql.append(q.status() == RunStatus.RUNNING ? " AND cancel_requested_at IS NULL"
                    : " AND cancel_requested_at IS NOT NULL");
        }
        filter(sql, args, q.userId(), " AND user_id = ?");
        filter(sql, args, q.sessionId(), " AND session_id = ? AND " + SESSION_INDEXED);
        filter(sql, args, time(q.createdAfter()), " AND created_at > ?");
        filter(sql, args, time(q.createdBefore()), " AND created_at < ?");
        if (q.after() != null) {
            // A row comparison, which the (…, created_at, id) indexes answer as one range.
            sql.append(" AND (created_at, id) < (?, ?)");
            args.add(time(q.after().createdAt()));
            args.add(q.after().id());
        }
        sql.append(" ORDER BY created_at DESC, id DESC LIMIT ?");
        args.add(q.limit() + 1);
        List<Run> out = reads.read(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
                for (int i = 0; i < args.size(); i++) {
                    ps.setObject(i + 1, args.get(i));
                }
                List<Run> rows = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows.add(RunRows.read(rs));
                    }
                }
                return rows;
            }
        });
        if (out.size() <= q.limit()) {
            return new RunPage(out, Optional.empty());
        }
        Run last = out.get(q.limit() - 1);
        return new RunPage(out.subList(0, q.limit()), Optional.of(new RunPosition(last.createdAt(), last.id())));
    }

    /**
     * As a {@code timestamptz} of the same instant: {@code java.sql.Timestamp} would pass an early date through the
     * Julian calendar, days away from the instant.
     */
    private static OffsetDateTime time(Instant t) {
        return t == null ? null : t.atOffset(ZoneOffset.UTC);
    }

    private static void filter(StringBuilder sql, List<Object> args, Object value, String clause) {
        if (value != null) {
            sql.append(clause);
            args.add(value);
        }
    }
}
