package dev.runbus.runs;

import java.util.UUID;

/**
 * @param runId   the run's id
 * @param created true when this call created the run; false when the key named an existing run
 *                (nothing was published then)
 * @param status  the run's status when this call returned
 */
public record SubmitResult(UUID runId, boolean created, RunStatus status) {
}
