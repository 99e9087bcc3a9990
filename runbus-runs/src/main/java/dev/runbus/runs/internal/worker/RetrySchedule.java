package dev.runbus.runs.internal.worker;

import dev.runbus.Delivery;
import dev.runbus.SubscribeOptions;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * When the bus will deliver a failed run trigger again, as the runs layer records it on the run
 * ({@code next_attempt_at}): {@link SubscribeOptions#retryDelay}, the very delay the bus applies (the attempt
 * that failed and the trigger's message id seed the policy's jitter), unless that attempt was the last allowed.
 */
public final class RetrySchedule {

    private final SubscribeOptions options;

    /** {@code options}: the workers' subscription, whose retry policy, minIdle and maxDeliveries the bus applies. */
    public RetrySchedule(SubscribeOptions options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    /** The delay before the next delivery after {@code failed} failed; empty when it was the last one allowed. */
    public Optional<Duration> after(Delivery failed) {
        if (isLast(failed)) {
            return Optional.empty(); // the bus dead-letters it
        }
        return Optional.of(options.retryDelay(failed));
    }

    /** Whether {@code d} is the last delivery allowed: if its handler fails, the bus dead-letters the entry. */
    public boolean isLast(Delivery d) {
        return d.attempt() >= options.maxDeliveries();
    }
}
