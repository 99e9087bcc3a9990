package dev.runbus.runs;

import java.util.Objects;

/**
 * What a schedule does when it fires while a run it made before has not finished (pending or running): docs/schedules.md,
 * "Overlap". The runs a schedule made are its fires' runs; only its 100 latest fires are looked at.
 */
public final class OverlapPolicy {

    /** The kinds of policy, as stored. */
    public enum Kind {
        /** The fire makes no run (counted as skipped for overlap). The default. */
        SKIP,
        /** The fire waits, without a run, until none of the schedule's runs is unfinished; at most {@link #buffer()}. */
        BUFFER,
        /** The unfinished runs are cancelled ({@link Runs#cancel}), then the fire makes its run. */
        CANCEL_RUNNING,
        /** The fire makes its run whatever runs. */
        ALLOW_ALL
    }

    /** The most fires {@link #buffer(int)} keeps waiting. */
    public static final int MAX_BUFFER = 100;

    private static final OverlapPolicy SKIP = new OverlapPolicy(Kind.SKIP, 0);
    private static final OverlapPolicy CANCEL = new OverlapPolicy(Kind.CANCEL_RUNNING, 0);
    private static final OverlapPolicy ALLOW = new OverlapPolicy(Kind.ALLOW_ALL, 0);

    private final Kind kind;
    private final int buffer;

    private OverlapPolicy(Kind kind, int buffer) {
        this.kind = kind;
        this.buffer = buffer;
    }

    /** A fire while a run is unfinished makes none. The default. */
    public static OverlapPolicy skip() {
        return SKIP;
    }

    /** One fire waits for the unfinished run to end, and starts then; more are skipped. */
    public static OverlapPolicy bufferOne() {
        return buffer(1);
    }

    /** Up to {@code n} fires (1 to {@value #MAX_BUFFER}) wait, and start one at a time, oldest first; more are skipped. */
    public static OverlapPolicy buffer(int n) {
        if (n < 1 || n > MAX_BUFFER) {
            throw new InvalidScheduleException("overlap", "buffer must be 1 to " + MAX_BUFFER + ", not " + n);
        }
        return new OverlapPolicy(Kind.BUFFER, n);
    }

    /** A fire cancels the unfinished runs and makes its own. */
    public static OverlapPolicy cancelRunning() {
        return CANCEL;
    }

    /** Every fire makes its run. */
    public static OverlapPolicy allowAll() {
        return ALLOW;
    }

    /** The policy of a kind and buffer as stored ({@code buffer} is read for {@link Kind#BUFFER} only). */
    public static OverlapPolicy of(Kind kind, int buffer) {
        return switch (Objects.requireNonNull(kind, "kind")) {
            case SKIP -> SKIP;
            case BUFFER -> buffer(buffer);
            case CANCEL_RUNNING -> CANCEL;
            case ALLOW_ALL -> ALLOW;
        };
    }

    public Kind kind() {
        return kind;
    }

    /** How many fires may wait ({@link Kind#BUFFER}); 0 for the other kinds. */
    public int buffer() {
        return buffer;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof OverlapPolicy p && p.kind == kind && p.buffer == buffer;
    }

    @Override
    public int hashCode() {
        return kind.hashCode() * 31 + buffer;
    }

    @Override
    public String toString() {
        return kind == Kind.BUFFER ? "buffer(" + buffer + ")" : kind.name().toLowerCase(java.util.Locale.ROOT);
    }
}
