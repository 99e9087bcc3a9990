package dev.runbus.internal.delay;

import java.util.function.Consumer;

/**
 * Named points of the delay paths where a crash must lose and double nothing. In production the hook is empty
 * and costs one volatile read. The crash tests install a hook in a child JVM that stops there and is then killed
 * with SIGKILL, to show that every such point converges (the runs layer has points of its own).
 */
public final class CrashPoints {

    /** The points. */
    public enum Point {
        /** A handler failed and a retry policy applies; the reschedule (ack + schedule, one script) is not sent. */
        BEFORE_RETRY_SCHEDULE,
        /** The reschedule was made (entry acked, copy scheduled); nothing else happened yet. */
        AFTER_RETRY_SCHEDULE,
        /** The delay mover is about to send a move call. */
        BEFORE_MOVE,
        /** A move call returned (its entries appended and unscheduled); nothing else happened yet. */
        AFTER_MOVE
    }

    private static volatile Consumer<Point> hook;

    private CrashPoints() {
    }

    /** Installs the hook (tests only); {@code null} removes it. */
    public static void install(Consumer<Point> h) {
        hook = h;
    }

    public static void reach(Point p) {
        Consumer<Point> h = hook;
        if (h != null) {
            h.accept(p);
        }
    }
}
