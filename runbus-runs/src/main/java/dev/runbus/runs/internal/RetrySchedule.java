package dev.runbus.runs.internal;

import dev.runbus.Delivery;
import dev.runbus.RetryPolicy;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * When the bus will deliver a failed run trigger again, as the runs layer records it on the run
 * ({@code next_attempt_at}). It computes what the bus computes, from the same inputs: the attempt that failed
 * and the trigger's message id, which seeds the policy's jitter; with {@link RetryPolicy#onIdle()} the entry is
 * taken again once idle for {@code minIdle}.
 */
public final class RetrySchedule {

    private final RetryPolicy policy;
    private final Duration minIdle;
    private final int maxDeliveries;

    public RetrySchedule(RetryPolicy policy, Duration minIdle, int maxDeliveries) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.minIdle = Objects.requireNonNull(minIdle, "minIdle");
        this.maxDeliveries = maxDeliveries;
    }

    /** The delay before the next delivery after {@code failed} failed; empty when it was the last one allowed. */
    public Optional<Duration> after(Delivery failed) {
        if (failed.attempt() >= maxDeliveries) {
            return Optional.empty(); // the bus dead-letters it
        }
        if (policy.isOnIdle()) {
            return Optional.of(minIdle);
        }
        return Optional.of(policy.delayAfter(failed.attempt(), failed.message().id()));
    }
}
