package dev.runbus;

import java.time.Duration;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * When a failed delivery is tried again. Set on {@link SubscribeOptions#retryPolicy()}.
 *
 * <ul>
 *   <li>{@link #onIdle()} (the default): the failed entry stays pending and is taken again once it has been idle
 *       for {@code minIdle}, like an entry whose consumer died. The retry delay and the takeover delay are one
 *       number.</li>
 *   <li>{@link #fixed(Duration)} and {@link #exponential(Duration, double, Duration, double)}: the failed entry
 *       is acknowledged and, in the same atomic step, put into its stream's delay set with its attempt number;
 *       it comes back into the stream when its delay is over (for this group only) and is delivered as attempt
 *       {@code n + 1}. The retry delay no longer depends on {@code minIdle}. On an ordered subscription the
 *       entry is retried in place after the delay instead, holding its partition, so that no later entry of the
 *       partition runs before it.</li>
 * </ul>
 * Either way {@code maxDeliveries} counts every attempt ({@link Delivery#attempt()} counts across reschedules): a
 * failure at that attempt dead-letters the entry. The runs past the limit that remain (an entry whose processes died
 * on it runs once more, alone; a start whose record was lost is not counted) are in docs/architecture.md.
 */
public final class RetryPolicy {

    /** The longest delay a policy may have. */
    public static final Duration MAX_DELAY = Duration.ofDays(365);

    private static final RetryPolicy ON_IDLE = new RetryPolicy(null, 1, null, 0);

    private final Duration base;
    private final double factor;
    private final Duration max;
    private final double jitter;

    private RetryPolicy(Duration base, double factor, Duration max, double jitter) {
        this.base = base;
        this.factor = factor;
        this.max = max;
        this.jitter = jitter;
    }

    /** Retry once the failed entry has been idle for {@code minIdle}: the behaviour without a policy. */
    public static RetryPolicy onIdle() {
        return ON_IDLE;
    }

    /** Retry {@code delay} after each failure. */
    public static RetryPolicy fixed(Duration delay) {
        return exponential(delay, 1, delay, 0);
    }

    /**
     * Retry after {@code base × factor^(n−1)} following the {@code n}-th failed attempt, at most {@code max}; with
     * {@code jitter} j in [0, 1], each delay is drawn uniformly from {@code [d × (1 − j), d]}, so that entries that
     * failed together do not come back together. {@code exponential(100ms, 2, 1s, 0)} waits 100, 200, 400, 800,
     * 1000, 1000 … ms.
     *
     * @throws IllegalArgumentException naming the argument when base is not positive, factor is below 1, max is
     *                                  below base or above {@link #MAX_DELAY}, or jitter is outside [0, 1]
     */
    public static RetryPolicy exponential(Duration base, double factor, Duration max, double jitter) {
        Objects.requireNonNull(base, "base");
        Objects.requireNonNull(max, "max");
        if (base.isNegative() || base.isZero()) {
            throw new IllegalArgumentException("retry base delay must be positive, got " + base);
        }
        if (!(factor >= 1) || Double.isInfinite(factor)) {
            throw new IllegalArgumentException("retry factor must be a number of at least 1, got " + factor);
        }
        if (max.compareTo(base) < 0) {
            throw new IllegalArgumentException("retry max delay (" + max + ") must be at least the base delay ("
                    + base + ")");
        }
        if (max.compareTo(MAX_DELAY) > 0) {
            throw new IllegalArgumentException("retry max delay must be at most " + MAX_DELAY + ", got " + max);
        }
        if (!(jitter >= 0 && jitter <= 1)) {
            throw new IllegalArgumentException("retry jitter must be between 0 and 1, got " + jitter);
        }
        return new RetryPolicy(base, factor, max, jitter);
    }

    /** True for {@link #onIdle()}: failed entries stay pending until taken over. */
    public boolean isOnIdle() {
        return base == null;
    }

    /**
     * The delay before the attempt after failed attempt {@code failedAttempt} (1 for the first) of the message with
     * id {@code messageId}, jitter included. The jitter is drawn from the message id and the attempt, not at random,
     * so that every process computes the same delay for the same failure (the runs layer shows the next attempt's
     * time that the bus will keep).
     *
     * @throws IllegalStateException for {@link #onIdle()}, which has no delay of its own
     */
    public Duration delayAfter(long failedAttempt, String messageId) {
        if (isOnIdle()) {
            throw new IllegalStateException("the on-idle retry policy has no delay of its own: it retries after minIdle");
        }
        double millis = base.toMillis() * Math.pow(factor, Math.max(0, failedAttempt - 1));
        long capped = (long) Math.min(millis, max.toMillis());
        if (jitter > 0) {
            long seed = 31L * Objects.hashCode(messageId) + failedAttempt;
            capped -= (long) (capped * jitter * new SplittableRandom(seed).nextDouble());
        }
        return Duration.ofMillis(Math.max(1, capped));
    }

    @Override
    public String toString() {
        if (isOnIdle()) {
            return "RetryPolicy.onIdle()";
        }
        if (factor == 1 && base.equals(max) && jitter == 0) {
            return "RetryPolicy.fixed(" + base + ")";
        }
        return "RetryPolicy.exponential(" + base + ", " + factor + ", " + max + ", " + jitter + ")";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RetryPolicy r && Objects.equals(base, r.base) && factor == r.factor
                && Objects.equals(max, r.max) && jitter == r.jitter;
    }

    @Override
    public int hashCode() {
        return Objects.hash(base, factor, max, jitter);
    }
}
