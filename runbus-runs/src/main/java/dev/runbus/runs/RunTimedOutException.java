package dev.runbus.runs;

import java.time.Duration;
import java.util.UUID;

/**
 * The failure of an attempt that ran past its timeout ({@link NewRun#timeout()},
 * {@link RunsConfig#executionTimeout()}): its run's error names it, and the attempt is retried under the retry policy
 * like any failed one. What the handler threw after it was told, if anything, is the cause.
 */
public class RunTimedOutException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RunTimedOutException(UUID runId, Duration timeout, Throwable cause) {
        super("run " + runId + ": the attempt timed out after " + timeout, cause);
    }
}
