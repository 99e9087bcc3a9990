package dev.runbus.runs;

import java.util.UUID;

/**
 * Thrown by {@link RunContext#throwIfCancelRequested()} when the run's cancel was asked for: a handler that lets it
 * out ends its attempt, and the run ends cancelled (never retried).
 */
public class RunCancelledException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RunCancelledException(UUID runId) {
        super("run " + runId + " is cancelled");
    }
}
