package dev.runbus.runs;

import java.util.List;

/**
 * Executes one run. Called at least once per run, more than once after a crash or a failure, so:
 * side effects outside PostgreSQL go through {@link RunContext#effects()}, and the replies returned are
 * written once whatever the number of executions (the first execution to commit wins).
 *
 * <p>Throwing fails this attempt: the run is tried again after {@code minIdle}, and after
 * {@code maxDeliveries} attempts it becomes {@link RunStatus#FAILED} with the exception as its error.
 */
@FunctionalInterface
public interface RunHandler {
    List<Reply> execute(RunContext run) throws Exception;
}
