package dev.runbus.server.http;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Submissions per second per caller: a token bucket holding up to {@code perSecond} submissions, refilled at
 * {@code perSecond}. A caller past it is told when the next submission will be accepted (429 with
 * {@code Retry-After}); others are not slowed.
 */
final class SubmissionRate {

    /** Buckets kept at most; past this, full ones (callers idle for a second or more) are forgotten. */
    private static final int MAX_BUCKETS = 10_000;

    private final double perSecond;
    private final LongSupplier nanos;
    private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

    /** @param perSecond 0: no limit */
    SubmissionRate(int perSecond, LongSupplier nanos) {
        this.perSecond = perSecond;
        this.nanos = nanos;
    }

    /** Takes one submission for {@code key}; returns 0 if allowed, else the nanoseconds until one is. */
    long acquire(String key) {
        if (perSecond <= 0) {
            return 0;
        }
        if (buckets.size() > MAX_BUCKETS) {
            long now = nanos.getAsLong();
            buckets.values().removeIf(b -> b.fullAt(now));
        }
        return buckets.computeIfAbsent(key, k -> new Bucket(perSecond, nanos.getAsLong())).take(nanos.getAsLong());
    }

    private static final class Bucket {
        private final double capacity;
        private double tokens;
        private long last;

        Bucket(double capacity, long now) {
            this.capacity = capacity;
            this.tokens = capacity;
            this.last = now;
        }

        synchronized long take(long now) {
            refill(now);
            if (tokens >= 1) {
                tokens -= 1;
                return 0;
            }
            return (long) Math.ceil((1 - tokens) / capacity * TimeUnit.SECONDS.toNanos(1));
        }

        synchronized boolean fullAt(long now) {
            refill(now);
            return tokens >= capacity;
        }

        private void refill(long now) {
            tokens = Math.min(capacity, tokens + (now - last) / 1e9 * capacity);
            last = now;
        }
    }
}
