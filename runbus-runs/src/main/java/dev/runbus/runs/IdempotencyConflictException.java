package dev.runbus.runs;

import java.util.UUID;

/** An idempotency key was submitted again with a different body: a client bug, not a retry. */
public class IdempotencyConflictException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final UUID existingRunId;

    public IdempotencyConflictException(String key, UUID existingRunId) {
        super("idempotency key '" + key + "' is already used by run " + existingRunId
                + " with a different session, user or input");
        this.existingRunId = existingRunId;
    }

    public UUID existingRunId() {
        return existingRunId;
    }
}
