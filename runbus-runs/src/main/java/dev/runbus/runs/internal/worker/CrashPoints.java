package dev.runbus.runs.internal.worker;

import java.util.function.Consumer;

/**
 * Named points between two writes where a crash must not lose or duplicate anything. In production the hook
 * is empty and costs one volatile read. The crash tests install a hook in a child JVM that stops there and
 * is then killed with SIGKILL, to prove that every such point converges.
 */
public final class CrashPoints {

    /** The points, in the order a run meets them. */
    public enum Point {
        /** The run row is committed; its trigger is not yet on the stream. */
        AFTER_INSERT_BEFORE_PUBLISH,
        /** The handler returned its replies; nothing of them is committed. */
        AFTER_HANDLER_BEFORE_COMMIT,
        /** Replies and done are committed; the stream entry is not yet acked. */
        AFTER_COMMIT_BEFORE_ACK,
        /** The stream entry is in the dead-letter stream and acked; the run is not yet marked failed. */
        AFTER_DEAD_LETTER_BEFORE_FAILED,
        /**
         * A relay claimed runs submitted in a caller's transaction (their marks are cleared in its open transaction);
         * their triggers are not yet published.
         */
        RELAY_AFTER_CLAIM_BEFORE_PUBLISH
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
