package dev.runbus.runs;

import dev.runbus.runs.internal.store.CountStore;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * How many runs are in each status, exactly, read cheaply: unfinished runs (cancelling ones apart from running) through
 * the partial index of pending and running runs (a read proportional to the backlog), finished ones (cancelled and
 * expired included) from counters that the same transaction that finishes a run updates (migrations V004, V005, V007,
 * V017). Nothing scans every run ever made.
 *
 * <p>{@code failedWithoutDeadLetter} is the part of {@code failed} that names no dead letter: runs that used their
 * attempts in PostgreSQL's count while their trigger was not at the bus's limit (a trigger republished by the
 * sweeper, or lost with Redis's data, starts its delivery count afresh), runs failed by hand, and, for a moment,
 * an ordered run its worker failed before the bus named the dead letter. An alert on dead letters does not see
 * these: alert on this count too (docs/runs.md, "Status").
 */
public record RunCounts(long pending, long running, long done, long failed, long failedWithoutDeadLetter,
                        long cancelled, long cancelling, long expired) {

    /** Counts without a cancelling or expired run. */
    public RunCounts(long pending, long running, long done, long failed, long failedWithoutDeadLetter,
                     long cancelled) {
        this(pending, running, done, failed, failedWithoutDeadLetter, cancelled, 0, 0);
    }

    /** Counts in which every failed run names its dead letter, and no run is cancelled. */
    public RunCounts(long pending, long running, long done, long failed) {
        this(pending, running, done, failed, 0, 0);
    }

    /** Counts without a cancelled run. */
    public RunCounts(long pending, long running, long done, long failed, long failedWithoutDeadLetter) {
        this(pending, running, done, failed, failedWithoutDeadLetter, 0);
    }

    /** The counts of the runs in {@code schema}, for readers without a runs layer ({@code runbus stats}, metrics). */
    public static RunCounts read(DataSource dataSource, String schema) {
        Objects.requireNonNull(dataSource, "dataSource");
        String s = RunsConfig.identifier("schema", schema);
        try {
            CountStore.Counts counts = CountStore.read(dataSource, s);
            Map<RunStatus, Long> m = counts.byStatus();
            return new RunCounts(m.getOrDefault(RunStatus.PENDING, 0L), m.getOrDefault(RunStatus.RUNNING, 0L),
                    m.getOrDefault(RunStatus.DONE, 0L), m.getOrDefault(RunStatus.FAILED, 0L),
                    counts.failedWithoutDeadLetter(), m.getOrDefault(RunStatus.CANCELLED, 0L),
                    m.getOrDefault(RunStatus.CANCELLING, 0L), m.getOrDefault(RunStatus.EXPIRED, 0L));
        } catch (java.sql.SQLException e) {
            String older = "42P01".equals(e.getSQLState()) ? " (the counters come with migration 4: is the schema older"
                    + " than this runbus? run the migration — runbus migrate)" : "";
            throw new RunStoreException("counting the runs of schema " + s + " failed: " + e.getMessage() + older, e);
        }
    }

    /** Every status, in the order of {@link RunStatus}, zeros included. */
    public Map<RunStatus, Long> asMap() {
        Map<RunStatus, Long> m = new EnumMap<>(RunStatus.class);
        m.put(RunStatus.PENDING, pending);
        m.put(RunStatus.RUNNING, running);
        m.put(RunStatus.CANCELLING, cancelling);
        m.put(RunStatus.DONE, done);
        m.put(RunStatus.FAILED, failed);
        m.put(RunStatus.CANCELLED, cancelled);
        m.put(RunStatus.EXPIRED, expired);
        return m;
    }
}
