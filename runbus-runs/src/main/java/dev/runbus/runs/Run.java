package dev.runbus.runs;

import java.time.Instant;
import java.util.Optional;
import java.util.UUID;

/** A run as the store holds it. */
public record Run(UUID id, String idempotencyKey, String sessionId, String userId, String input, RunStatus status,
                  int attempts, Optional<String> error, Optional<String> deadLetterId, int republished,
                  Instant createdAt, Instant updatedAt) {
}
