package dev.runbus.runs;

import java.util.EnumSet;
import java.util.Set;

/**
 * The life of a run, and every legal transition, in one place:
 *
 * <pre>
 * cancelled ◄── pending ──► running ──► done
 *                 ▲          │  ▲
 *                 │          └──┘ (another attempt)
 *                 │          ▼
 *                 └─────── failed   (failed → pending: replay only)
 * </pre>
 *
 * Only a pending run can be cancelled: a running one has a handler at work whose effects cannot be called back.
 *
 * A running run fails in one of two ways: the stream entry of its current attempt is dead-lettered (an ordered
 * run's worker fails it just before the bus moves that entry), or a trigger finds that it has used the attempts it
 * is allowed since its last replay by PostgreSQL's count ({@code maxDeliveries}), and it fails without a dead
 * letter (docs/runs.md, "Status"). A pending run has no attempt in progress and none used since its last replay, so it
 * cannot fail. The store writes each transition with {@code WHERE status IN (sources)}, so an illegal one changes
 * nothing.
 */
public enum RunStatus {
    PENDING, RUNNING, DONE, FAILED, CANCELLED;

    /** Whether a run in this status may move to {@code next}. */
    public boolean canMoveTo(RunStatus next) {
        switch (this) {
            case PENDING:
                return next == RUNNING || next == CANCELLED;
            case RUNNING:
                return next == RUNNING || next == DONE || next == FAILED;
            case FAILED:
                return next == PENDING; // replay
            case DONE:
            case CANCELLED:
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

    /** Done, failed or cancelled: nothing will run again (short of a replay of a failed run). */
    public boolean isFinished() {
        return this == DONE || this == FAILED || this == CANCELLED;
    }

    public String sql() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static RunStatus fromSql(String s) {
        return valueOf(s.toUpperCase(java.util.Locale.ROOT));
    }
}
