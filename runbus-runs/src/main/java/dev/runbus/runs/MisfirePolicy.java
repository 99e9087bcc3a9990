package dev.runbus.runs;

import java.time.Duration;
import java.util.Objects;

/**
 * What a schedule does with fires it missed (no scheduler ran, or it was down, when they were due): docs/schedules.md,
 * "Misfires". A fire is on time when it is found at most {@link #grace()} after its time (default one minute); every
 * on-time fire makes its run, whatever the policy. The others were missed, and the policy says which of them still
 * make one, each counted as caught up; the rest are counted as missed.
 */
public final class MisfirePolicy {

    /** The kinds of policy, as stored. */
    public enum Kind {
        /** Missed fires make one run together, for the latest of them, unless an on-time fire makes one. The default. */
        RUN_ONCE,
        /** Missed fires make no run. */
        SKIP,
        /** The latest {@link #catchUpMax()} missed fires within {@link #catchUpWindow()} make a run each. */
        CATCH_UP
    }

    /** The default grace: a scheduler polls every second, so a fire found a minute late was missed. */
    public static final Duration DEFAULT_GRACE = Duration.ofMinutes(1);
    /** The most fires {@link #catchUp} makes at once. */
    public static final int MAX_CATCH_UP = 1_000;

    private final Kind kind;
    private final int catchUpMax;
    private final Duration catchUpWindow;
    private final Duration grace;

    private MisfirePolicy(Kind kind, int catchUpMax, Duration catchUpWindow, Duration grace) {
        this.kind = kind;
        this.catchUpMax = catchUpMax;
        this.catchUpWindow = catchUpWindow;
        this.grace = grace;
    }

    /** Missed fires make one run. The default. */
    public static MisfirePolicy runOnce() {
        return new MisfirePolicy(Kind.RUN_ONCE, 0, Duration.ZERO, DEFAULT_GRACE);
    }

    /** Missed fires make none. */
    public static MisfirePolicy skip() {
        return new MisfirePolicy(Kind.SKIP, 0, Duration.ZERO, DEFAULT_GRACE);
    }

    /**
     * The latest {@code max} (1 to {@value #MAX_CATCH_UP}) missed fires no older than {@code window} make a run each.
     */
    public static MisfirePolicy catchUp(int max, Duration window) {
        Objects.requireNonNull(window, "window");
        if (max < 1 || max > MAX_CATCH_UP) {
            throw new InvalidScheduleException("misfire", "catch-up max must be 1 to " + MAX_CATCH_UP + ", not " + max);
        }
        if (window.compareTo(Duration.ofSeconds(1)) < 0 || window.compareTo(Duration.ofDays(366)) > 0) {
            throw new InvalidScheduleException("misfire", "catch-up window must be 1 s to 366 days, not " + window);
        }
        return new MisfirePolicy(Kind.CATCH_UP, max, window, DEFAULT_GRACE);
    }

    /** This policy with another grace: 1 s to a day. */
    public MisfirePolicy withGrace(Duration grace) {
        Objects.requireNonNull(grace, "grace");
        if (grace.compareTo(Duration.ofSeconds(1)) < 0 || grace.compareTo(Duration.ofDays(1)) > 0) {
            throw new InvalidScheduleException("misfire", "grace must be 1 s to a day, not " + grace);
        }
        return new MisfirePolicy(kind, catchUpMax, catchUpWindow, grace);
    }

    /** The policy as stored. */
    public static MisfirePolicy of(Kind kind, int catchUpMax, Duration catchUpWindow, Duration grace) {
        MisfirePolicy p = switch (Objects.requireNonNull(kind, "kind")) {
            case RUN_ONCE -> runOnce();
            case SKIP -> skip();
            case CATCH_UP -> catchUp(catchUpMax, catchUpWindow);
        };
        return p.withGrace(grace);
    }

    public Kind kind() {
        return kind;
    }

    /** How many missed fires {@link Kind#CATCH_UP} makes at most; 0 for the other kinds. */
    public int catchUpMax() {
        return catchUpMax;
    }

    /** How old a missed fire {@link Kind#CATCH_UP} still makes; zero for the other kinds. */
    public Duration catchUpWindow() {
        return catchUpWindow;
    }

    /** How late a fire may be found and still be on time. */
    public Duration grace() {
        return grace;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MisfirePolicy p && p.kind == kind && p.catchUpMax == catchUpMax
                && p.catchUpWindow.equals(catchUpWindow) && p.grace.equals(grace);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, catchUpMax, catchUpWindow, grace);
    }

    @Override
    public String toString() {
        String k = kind == Kind.CATCH_UP ? "catch_up(" + catchUpMax + ", " + catchUpWindow + ")"
                : kind.name().toLowerCase(java.util.Locale.ROOT);
        return grace.equals(DEFAULT_GRACE) ? k : k + " grace " + grace;
    }
}
