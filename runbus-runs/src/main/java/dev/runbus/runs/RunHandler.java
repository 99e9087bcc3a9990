package dev.runbus.runs;

import java.util.List;

/**
 * Executes one run. Called at least once per run, more than once after a crash or a failure, so:
 * side effects outside PostgreSQL go through {@link RunContext#effects()}, and the replies returned are
 * written once whatever the number of executions (the first execution to commit wins).
 *
 * <p>Throwing fails this attempt: the run is tried again after the delay of {@link RunsConfig#retryPolicy()}
 * (by default about 1 s after the first failure, then 2, 4 … 30 s at most; {@code workerOptions.minIdle} with
 * {@code RetryPolicy.onIdle()}), and after {@code maxDeliveries} attempts it becomes {@link RunStatus#FAILED} with
 * the exception as its error. {@link Run#nextAttemptAt()} says when the next attempt is due.
 */
@FunctionalInterface
public interface RunHandler {
    List<Reply> execute(RunContext run) throws Exception;
}
