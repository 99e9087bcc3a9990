package dev.runbus.runs.internal.store;

import dev.runbus.runs.RunStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.function.LongConsumer;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * Deleting finished runs (done, failed, cancelled) with their replies and effects, a batch per statement.
 *
 * <p>Each batch is one statement, so one transaction: it reads the next runs of one status in {@code (created_at,
 * id)} order from {@code runs_status_created_idx} (migration V006), after where the previous batch of that status
 * ended, and deletes them with their replies and effects (the foreign keys are checked at the end of the statement,
 * when the three deletes are done). Only the batch's rows are locked, and only until it commits: submissions,
 * attempts and other runs' completions go on meanwhile. A run finishes after it is created, so a run finished before
 * the bound was created before it too: the walk never reads past the bound in the index. Walking forward from the last
 * position, rather than asking again from the start, keeps each batch from reading the index entries of the runs the
 * earlier batches deleted (until vacuum, they are still there).
 *
 * <p>The delete checks the status and time of each row again: a failed run replayed between the batch's read and its
 * delete is pending, and stays (PostgreSQL re-reads a row another transaction changed before it deletes it). A run
 * without {@code finished_at} (written by hand) is judged by {@code updated_at}. The counts of finished runs
 * ({@code run_counts}) go down by what is deleted, through their trigger.
 */
public final class RunPruning {

    /** The statuses whose runs may be deleted: those a run never leaves by itself. */
    public static final List<RunStatus> FINISHED = Arrays.stream(RunStatus.values()).filter(RunStatus::isFinished)
            .toList();

    private final DataSource dataSource;
    private final String countSql;
    /** The first batch of a status, and the next ones (after the last run of the previous batch). */
    private final String firstBatchSql;
    private final String nextBatchSql;

    public RunPruning(DataSource dataSource, String schema) {
        this.dataSource = AutoCommitDataSource.of(dataSource);
        String runs = schema + ".runs";
        String finished = FINISHED.stream().map(s -> "'" + s.sql() + "'").collect(Collectors.joining(", "));
        this.countSql = "SELECT count(*) FROM " + runs + " WHERE status IN (" + finished + ") AND created_at < ?"
                + " AND coalesce(finished_at, updated_at) < ?";
        this.firstBatchSql = batchSql(schema, finished, "");
        this.nextBatchSql = batchSql(schema, finished, " AND (created_at, id) > (?, ?)");
    }

    /**
     * The status recheck of the delete is written with {@code || ''} so that no index matches it: the rows come by key
     * from the batch ({@link RunStore#statusIn} says why).
     */
    private static String batchSql(String schema, String finished, String after) {
        String runs = schema + ".runs";
        return "WITH batch AS (SELECT id, created_at FROM " + runs + " WHERE status = ? AND created_at < ?"
                + after + " AND coalesce(finished_at, updated_at) < ?"
                + " ORDER BY created_at, id LIMIT ?),"
                + " gone AS (DELETE FROM " + runs + " r USING batch b WHERE r.id = b.id"
                + " AND (r.status || '') IN (" + finished + ") AND coalesce(r.finished_at, r.updated_at) < ?"
                + " RETURNING r.id),"
                + " replies AS (DELETE FROM " + schema + ".messages WHERE run_id IN (SELECT id FROM gone)),"
                + " effects AS (DELETE FROM " + schema + ".run_effects WHERE run_id IN (SELECT id FROM gone))"
                + " SELECT (SELECT count(*) FROM gone), last.created_at, last.id"
                + " FROM (SELECT created_at, id FROM batch ORDER BY created_at DESC, id DESC LIMIT 1) last";
    }

    /** How many runs finished before {@code before}: what {@link #delete} would delete now. */
    public long count(Instant before) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(countSql)) {
            ps.setObject(1, time(before));
            ps.setObject(2, time(before));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * Deletes the runs finished before {@code before}, {@code batchSize} at a time; {@code afterEachBatch} is told the
     * number deleted so far after each batch that deleted some. Returns how many it deleted.
     */
    public long delete(Instant before, int batchSize, LongConsumer afterEachBatch) throws SQLException {
        long deleted = 0;
        for (RunStatus status : FINISHED) {
            OffsetDateTime afterCreated = null; // the first batch starts at the status's oldest run
            UUID afterId = null;
            while (true) {
                Batch b = batch(status, before, afterCreated, afterId, batchSize);
                if (b == null) {
                    break; // no run of this status left before the bound
                }
                if (b.deleted() > 0) {
                    deleted += b.deleted();
                    afterEachBatch.accept(deleted);
                }
                afterCreated = b.lastCreated();
                afterId = b.lastId();
            }
        }
        return deleted;
    }

    /** What one batch did, and where it ended; null when it found no run. */
    private record Batch(long deleted, OffsetDateTime lastCreated, UUID lastId) {
    }

    private Batch batch(RunStatus status, Instant before, OffsetDateTime afterCreated, UUID afterId, int size)
            throws SQLException {
        boolean first = afterCreated == null;
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(first ? firstBatchSql : nextBatchSql)) {
            int i = 1;
            ps.setString(i++, status.sql());
            ps.setObject(i++, time(before));
            if (!first) {
                ps.setObject(i++, afterCreated);
                ps.setObject(i++, afterId);
            }
            ps.setObject(i++, time(before));
            ps.setInt(i++, size);
            ps.setObject(i, time(before));
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new Batch(rs.getLong(1), rs.getObject(2, OffsetDateTime.class), rs.getObject(3, UUID.class));
            }
        }
    }

    /** As a {@code timestamptz} of the same instant (see {@code RunListing}). */
    private static OffsetDateTime time(Instant t) {
        return t.atOffset(ZoneOffset.UTC);
    }
}
