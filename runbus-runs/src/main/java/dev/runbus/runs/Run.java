package dev.runbus.runs;

import java.time.Instant;
import java.util.Optional;
import java.util.UUID;

/**
 * A run as the store holds it.
 *
 * @param error         why the last attempt failed, as stored: at most {@link #MAX_ERROR_LENGTH} characters
 *                      (a longer text is cut and ends with "…"), without control characters other than newline and
 *                      tab. A handler's exception message is shown to every reader of the run, so it is kept
 *                      bounded and printable where it is stored, which also spares PostgreSQL megabyte messages
 *                      and NULs it would refuse
 * @param attempts      attempts started, replays included; between two replays at most {@code maxDeliveries}
 *                      (one more for a trigger that runs alone after worker processes died on it, docs/runs.md)
 * @param nextAttemptAt when the next attempt of a failing run is due by {@link RunsConfig#retryPolicy()}: set when
 *                      an attempt fails with attempts left, empty while an attempt runs, when none is left and
 *                      once the run is finished (done, failed, cancelled or expired). Informative: the bus schedules
 *                      the retry, and a retry may come later (a busy worker) or sooner (a republished trigger)
 * @param progress      the latest progress its handler reported ({@link RunContext#progress(int, String)}), kept
 *                      after the run ends; empty when none was
 * @param expiresAt     when the run, if still pending, expires ({@link NewRun#expireAfter()}, by PostgreSQL's clock);
 *                      empty for none
 * @param timeout       its attempts' own timeout ({@link NewRun#timeout()}); empty when it has none (the workers'
 *                      {@link RunsConfig#executionTimeout()} applies)
 */
public record Run(UUID id, String idempotencyKey, String sessionId, String userId, String input, RunStatus status,
                  int attempts, Optional<String> error, Optional<String> deadLetterId, int republished,
                  Instant createdAt, Instant updatedAt, Optional<Instant> nextAttemptAt,
                  Optional<Progress> progress, Optional<Instant> expiresAt, Optional<java.time.Duration> timeout) {

    /** A run without an expiry or a timeout of its own. */
    public Run(UUID id, String idempotencyKey, String sessionId, String userId, String input, RunStatus status,
               int attempts, Optional<String> error, Optional<String> deadLetterId, int republished,
               Instant createdAt, Instant updatedAt, Optional<Instant> nextAttemptAt, Optional<Progress> progress) {
        this(id, idempotencyKey, sessionId, userId, input, status, attempts, error, deadLetterId, republished,
                createdAt, updatedAt, nextAttemptAt, progress, Optional.empty(), Optional.empty());
    }

    /** A run without progress reported. */
    public Run(UUID id, String idempotencyKey, String sessionId, String userId, String input, RunStatus status,
               int attempts, Optional<String> error, Optional<String> deadLetterId, int republished,
               Instant createdAt, Instant updatedAt, Optional<Instant> nextAttemptAt) {
        this(id, idempotencyKey, sessionId, userId, input, status, attempts, error, deadLetterId, republished,
                createdAt, updatedAt, nextAttemptAt, Optional.empty());
    }

    /** The longest {@link #error()} stored or read. */
    public static final int MAX_ERROR_LENGTH = 2000;
}
