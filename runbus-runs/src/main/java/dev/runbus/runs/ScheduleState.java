package dev.runbus.runs;

import java.time.Instant;

/**
 * A stored schedule and what it has done (docs/schedules.md, "Metrics").
 *
 * @param schedule       its definition
 * @param nextFireAt     when it fires next; null when it fires no more (past its end, or an expression that never
 *                       matches again)
 * @param lastFireAt     the time of its latest fire that made (or buffered) a run; null before the first
 * @param fired          fires that made a run on time (a buffered fire when its run is made)
 * @param skippedOverlap fires that made no run because one of its runs was unfinished
 * @param missed         fires due while no scheduler fired them, that its misfire policy did not make
 * @param caughtUp       missed fires that its misfire policy made a run for
 * @param waiting        fires buffered behind an unfinished run ({@link OverlapPolicy#buffer})
 * @param createdAt      when it was created (PostgreSQL's clock); an interval schedule without a start counts from it
 * @param updatedAt      when its definition or state last changed
 */
public record ScheduleState(Schedule schedule, Instant nextFireAt, Instant lastFireAt, long fired, long skippedOverlap,
                            long missed, long caughtUp, long waiting, Instant createdAt, Instant updatedAt) {
}
