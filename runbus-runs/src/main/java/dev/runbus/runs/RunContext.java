package dev.runbus.runs;

import java.util.UUID;

/**
 * What a {@link RunHandler} gets for one attempt.
 *
 * @param runId          the run's id
 * @param idempotencyKey the run's idempotency key; pass it (or an effect's key) to external systems
 * @param attempt        1 on the first attempt, counted in PostgreSQL
 * @param effects        records side effects so that each is initiated at most once per run
 */
public record RunContext(UUID runId, String idempotencyKey, String sessionId, String userId, String input,
                         int attempt, Effects effects) {
}
