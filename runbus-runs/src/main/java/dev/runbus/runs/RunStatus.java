package dev.runbus.runs;

import java.util.EnumSet;
import java.util.Set;

/**
 * The life of a run, and every legal transition, in one place:
 *
 * <pre>
 *   expired ◄──┐
 * cancelled ◄── pending ──► running ──► done
 *     ▲           ▲          │  ▲  │
 *     │           │          └──┘  └──► cancelling   (a cancel asked while a handler is at work)
 *     │           │          ▼              │
 *     │           └─────── failed           │        (failed → pending: replay only)
 *     └─────────────────────────────────────┘
 * </pre>
 *
 * A pending run is cancelled at once. A running run becomes cancelling: its handler is told
 * ({@link RunContext#isCancelRequested()}) and interrupted after the grace period ({@code RunsConfig.cancelGrace}),
 * and the attempt's end, whatever it is (replies, an error, the interrupt), makes it cancelled, never retried. Its
 * replies are kept, and an effect in flight follows the in-doubt rule of {@link Effects}. A running run between
 * attempts (waiting for a retry) has no handler at work and is cancelled at once. Whichever commits first, the cancel
 * or the attempt's end, decides: a run that completed first stays done and its cancel is refused.
 *
 * <p>A pending run whose expiry passed ({@link NewRun#expireAfter()}) is never started: its next trigger or the sweeper
 * makes it expired, final.
 *
 * <p>In PostgreSQL a cancelling run is a running row with {@code cancel_requested_at} set (migration V016), so that
 * every statement and index that knows running runs sees it too; the store shows it as cancelling.
 *
 * A running run fails in one of two ways: the stream entry of its current attempt is dead-lettered (an ordered
 * run's worker fails it just before the bus moves that entry), or a trigger finds that it has used the attempts it
 * is allowed since its last replay by PostgreSQL's count ({@code maxDeliveries}), and it fails without a dead
 * letter (docs/runs.md, "Status"). A pending run has no attempt in progress and none used since its last replay, so it
 * cannot fail. The store writes each transition with {@code WHERE status IN (sources)}, so an illegal one changes
 * nothing.
 */
public enum RunStatus {
    PENDING, RUNNING, CANCELLING, DONE, FAILED, CANCELLED, EXPIRED;

    /** Whether a run in this status may move to {@code next}. */
    public boolean canMoveTo(RunStatus next) {
        switch (this) {
            case PENDING:
                return next == RUNNING || next == CANCELLED || next == EXPIRED;
            case RUNNING:
                return next == RUNNING || next == DONE || next == FAILED || next == CANCELLING;
            case CANCELLING:
                return next == CANCELLED;
            case FAILED:
                return next == PENDING; // replay
            case DONE:
            case CANCELLED:
            case EXPIRED:
            default:
                return false;
        }
    }

    /** The statuses from which a run may move to {@code next}. */
    public static Set<RunStatus> sourcesOf(RunStatus next) {
        Set<RunStatus> sources = EnumSet.noneOf(RunStatus.class);
        for (RunStatus s : values()) {
            if (s.canMoveTo(next)) {
                sources.add(s);
            }
        }
        return sources;
    }

    /** Done, failed, cancelled or expired: nothing will run again (short of a replay of a failed run). */
    public boolean isFinished() {
        return this == DONE || this == FAILED || this == CANCELLED || this == EXPIRED;
    }

    /**
     * The status's name in SQL and JSON. A cancelling run is stored as {@code running} with a cancel request, so
     * {@code cancelling} is never written to the status column.
     */
    public String sql() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static RunStatus fromSql(String s) {
        return valueOf(s.toUpperCase(java.util.Locale.ROOT));
    }
}
