package dev.runbus.runs;

/**
 * How a run handler learns that its run's cancel was asked for ({@link Runs#cancel}): through
 * {@link RunContext#isCancelRequested()}, {@link RunContext#throwIfCancelRequested()} and
 * {@link RunContext#onCancel(Runnable)}. The worker sets it within moments of the cancel's commit (PostgreSQL's
 * NOTIFY, and a check of its running runs every {@code RunsConfig.cancelCheckInterval} besides), and interrupts the
 * handler's thread {@code RunsConfig.cancelGrace} later if it is still at work.
 */
public interface RunCancellation {

    /** Never cancelled: a context made by hand (a handler's unit test). */
    RunCancellation NONE = new RunCancellation() {
        @Override
        public boolean isRequested() {
            return false;
        }

        @Override
        public void onRequest(Runnable callback) {
            java.util.Objects.requireNonNull(callback, "callback");
        }
    };

    /** Whether the run's cancel was asked for (or its attempt timed out). */
    boolean isRequested();

    /**
     * Runs {@code callback} once when the cancel is asked for, on the worker's watch thread (so it must return
     * quickly: close a socket, cancel a future), or at once on this thread if it was asked for already. A callback
     * that throws is logged; the others still run.
     */
    void onRequest(Runnable callback);
}
