package dev.runbus.runs;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A recurring schedule: when it fires ({@link #cron} in {@link #zone}, or every {@link #interval}) and the run each
 * fire makes ({@link #run}, without an idempotency key: each fire's run is keyed by the schedule and the fire's
 * time). Stored in PostgreSQL by {@link Schedules}; fired by a scheduler ({@link Schedules#startScheduler()}) exactly once
 * per fire time (docs/schedules.md).
 *
 * <p>Made with {@link #cron(String, String, NewRun)} or {@link #every(String, Duration, NewRun)}, then the
 * {@code with…} methods; each refuses what no schedule can be with an {@link InvalidScheduleException} naming it.
 *
 * @param name     1 to {@value #MAX_NAME_LENGTH} letters, digits, {@code .}, {@code _}, {@code -} or {@code :};
 *                 the schedule's identity
 * @param cron     when it fires, or null for an interval schedule
 * @param interval how often it fires (1 s to 366 days), or null for a cron schedule: at {@link #startAt} (or when
 *                 it was created) and every interval after
 * @param zone     the time zone of {@link #cron} (default UTC); an interval schedule keeps real time
 * @param jitter   each fire's run is delayed by up to this much (default none), the same for a fire wherever it is
 *                 fired: 0 to a day, spreading schedules that fire at one time
 * @param startAt  no fire before this instant (null: from now)
 * @param endAt    no fire after this instant (null: none); after {@link #startAt}
 * @param paused   a paused schedule does not fire; resumed, it fires from then on (the fires in between are neither
 *                 made nor counted missed)
 * @param overlap  what a fire does while a run of the schedule is unfinished (default {@link OverlapPolicy#skip()})
 * @param misfire  what missed fires do (default {@link MisfirePolicy#runOnce()})
 * @param run      the run each fire makes; its idempotency key must be null
 */
public record Schedule(String name, CronExpression cron, Duration interval, ZoneId zone, Duration jitter,
                       Instant startAt, Instant endAt, boolean paused, OverlapPolicy overlap, MisfirePolicy misfire,
                       NewRun run) {

    public static final int MAX_NAME_LENGTH = 200;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._:-]{1," + MAX_NAME_LENGTH + "}");
    /** The longest interval and jitter. */
    public static final Duration MAX_INTERVAL = Duration.ofDays(366);
    public static final Duration MAX_JITTER = Duration.ofDays(1);

    public Schedule {
        checkName(name);
        if ((cron == null) == (interval == null)) {
            throw new InvalidScheduleException("cron", "or an interval: give exactly one");
        }
        if (interval != null && (interval.compareTo(Duration.ofSeconds(1)) < 0
                || interval.compareTo(MAX_INTERVAL) > 0)) {
            throw new InvalidScheduleException("interval", "must be 1 s to 366 days, not " + interval);
        }
        zone = zone == null ? ZoneOffset.UTC : zone;
        jitter = jitter == null ? Duration.ZERO : jitter;
        if (jitter.isNegative() || jitter.compareTo(MAX_JITTER) > 0) {
            throw new InvalidScheduleException("jitter", "must be 0 to a day, not " + jitter);
        }
        for (Instant at : new Instant[] {startAt, endAt}) {
            if (at != null && !RunQuery.inRange(at)) {
                throw new InvalidScheduleException(at == startAt ? "startAt" : "endAt",
                        "must be in the years 0001 to 9999, not " + at);
            }
        }
        // An interval counts from its start in whole milliseconds, as it is stored.
        startAt = startAt == null ? null : startAt.truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        if (startAt != null && endAt != null && !endAt.isAfter(startAt)) {
            throw new InvalidScheduleException("endAt", "must be after startAt (" + startAt + "), not " + endAt);
        }
        overlap = overlap == null ? OverlapPolicy.skip() : overlap;
        misfire = misfire == null ? MisfirePolicy.runOnce() : misfire;
        Objects.requireNonNull(run, "run");
        if (run.idempotencyKey() != null) {
            throw new InvalidScheduleException("run", "must have no idempotency key: each fire's run is keyed by the "
                    + "schedule's name and the fire's time");
        }
    }

    /** Refuses a name no schedule can have, naming the rule. */
    public static void checkName(String name) {
        Objects.requireNonNull(name, "name");
        if (!NAME.matcher(name).matches()) {
            throw new InvalidScheduleException("name", "must be 1 to " + MAX_NAME_LENGTH + " letters, digits, '.', "
                    + "'_', '-' or ':', not '" + (name.length() > 60 ? name.substring(0, 60) + "…" : name) + "'");
        }
    }

    /** A schedule that fires by a cron expression ({@link CronExpression#parse}), in UTC unless given a zone. */
    public static Schedule cron(String name, String cron, NewRun run) {
        return new Schedule(name, CronExpression.parse(cron), null, null, null, null, null, false, null, null, run);
    }

    /** A schedule that fires every {@code interval}, from its start. */
    public static Schedule every(String name, Duration interval, NewRun run) {
        return new Schedule(name, null, Objects.requireNonNull(interval, "interval"), null, null, null, null, false,
                null, null, run);
    }

    public Schedule withZone(ZoneId zone) {
        return new Schedule(name, cron, interval, Objects.requireNonNull(zone, "zone"), jitter, startAt, endAt, paused,
                overlap, misfire, run);
    }

    public Schedule withJitter(Duration jitter) {
        return new Schedule(name, cron, interval, zone, Objects.requireNonNull(jitter, "jitter"), startAt, endAt, paused,
                overlap, misfire, run);
    }

    public Schedule withStartAt(Instant startAt) {
        return new Schedule(name, cron, interval, zone, jitter, startAt, endAt, paused, overlap, misfire, run);
    }

    public Schedule withEndAt(Instant endAt) {
        return new Schedule(name, cron, interval, zone, jitter, startAt, endAt, paused, overlap, misfire, run);
    }

    public Schedule withPaused(boolean paused) {
        return new Schedule(name, cron, interval, zone, jitter, startAt, endAt, paused, overlap, misfire, run);
    }

    public Schedule withOverlap(OverlapPolicy overlap) {
        return new Schedule(name, cron, interval, zone, jitter, startAt, endAt, paused,
                Objects.requireNonNull(overlap, "overlap"), misfire, run);
    }

    public Schedule withMisfire(MisfirePolicy misfire) {
        return new Schedule(name, cron, interval, zone, jitter, startAt, endAt, paused, overlap,
                Objects.requireNonNull(misfire, "misfire"), run);
    }

    public Schedule withRun(NewRun run) {
        return new Schedule(name, cron, interval, zone, jitter, startAt, endAt, paused, overlap, misfire, run);
    }

    /**
     * The first fire time strictly after {@code after}, within {@link #startAt} and {@link #endAt}; null when it fires
     * no more. {@code anchor} is where an interval schedule counts from when it has no {@link #startAt} (its
     * creation).
     */
    public Instant nextFireAfter(Instant after, Instant anchor) {
        Instant from = after;
        if (startAt != null && from.isBefore(startAt)) {
            from = startAt.minusNanos(1);
        }
        Instant next;
        if (cron != null) {
            next = cron.next(from, zone).orElse(null);
        } else {
            Instant base = startAt != null ? startAt : Objects.requireNonNull(anchor, "anchor");
            if (from.isBefore(base)) {
                next = base;
            } else {
                long step = interval.toMillis();
                long since = from.toEpochMilli() - base.toEpochMilli();
                next = base.plusMillis((since / step + 1) * step);
            }
        }
        return next == null || (endAt != null && next.isAfter(endAt)) ? null : next;
    }
}
