package dev.runbus.server.http;

import java.util.function.LongSupplier;

/**
 * Submissions per second per caller ({@link RateBuckets}): a caller past it is told when the next submission will
 * be accepted (429 with {@code Retry-After}); others are not slowed.
 */
final class SubmissionRate {

    private final RateBuckets buckets;

    /** @param perSecond 0: no limit */
    SubmissionRate(int perSecond, LongSupplier nanos) {
        this.buckets = new RateBuckets(perSecond, nanos, RateBuckets.DEFAULT_MAX_KEYS);
    }

    /** Takes one submission for {@code key}; returns 0 if allowed, else the nanoseconds until one is. */
    long acquire(String key) {
        return buckets.acquire(key);
    }
}
