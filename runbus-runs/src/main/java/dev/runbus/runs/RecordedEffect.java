package dev.runbus.runs;

import java.time.Instant;
import java.util.Optional;

/**
 * An effect of a run as recorded in {@code run_effects} ({@link Effects}): committed as initiated before its call,
 * completed with its result once the call returned. An effect initiated and never completed is one whose outcome
 * is in doubt (its process died during the call, see {@link EffectInDoubtException}).
 *
 * @param name           the effect's name within the run
 * @param idempotencyKey the key the effect's call was given
 * @param result         what the call returned, once completed
 * @param initiatedAt    when the initiated row was committed
 * @param completedAt    when the result was recorded; empty while in doubt
 */
public record RecordedEffect(String name, String idempotencyKey, Optional<String> result, Instant initiatedAt,
                             Optional<Instant> completedAt) {
}
