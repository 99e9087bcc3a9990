package dev.runbus.server.http;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Requests per second per key (a token's name, or a client's address without tokens): a token bucket per key
 * holding up to {@code perSecond} requests, refilled at {@code perSecond}. A key past it is told when its next
 * request will be accepted; other keys are not slowed.
 *
 * <p>At most {@code maxKeys} buckets are kept, least recently used dropped first, so that clients coming from
 * ever new addresses cannot grow the map without bound. A bucket untouched for its refill time (a second, or a
 * minute for {@link #perMinute}) is full again, so dropping it loses nothing; only when more than {@code maxKeys}
 * keys are active within that time does a dropped key start again from a full bucket (it gets one burst more).
 */
final class RateBuckets {

    /** Buckets kept at most by default: far more callers than one server answers in a second. */
    static final int DEFAULT_MAX_KEYS = 10_000;

    private final double capacity;
    private final double perSecond;
    private final LongSupplier nanos;
    private final Map<String, Bucket> buckets;

    /** @param perSecond 0: no limit */
    RateBuckets(int perSecond, LongSupplier nanos, int maxKeys) {
        this(perSecond, perSecond, nanos, maxKeys);
    }

    /**
     * Up to {@code perMinute} requests at once per key, refilled at {@code perMinute} a minute: for what a person
     * does a few times (signing in), where a second's worth would be no limit at all.
     *
     * @param perMinute 0: no limit
     */
    static RateBuckets perMinute(int perMinute, LongSupplier nanos, int maxKeys) {
        return new RateBuckets(perMinute, perMinute / 60.0, nanos, maxKeys);
    }

    private RateBuckets(double capacity, double perSecond, LongSupplier nanos, int maxKeys) {
        this.capacity = capacity;
        this.perSecond = perSecond;
        this.nanos = nanos;
        this.buckets = new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Bucket> eldest) {
                return size() > maxKeys;
            }
        };
    }

    /** Takes one request for {@code key}; returns 0 if allowed, else the nanoseconds until one is. */
    long acquire(String key) {
        if (perSecond <= 0) {
            return 0;
        }
        long now = nanos.getAsLong();
        synchronized (buckets) {
            return buckets.computeIfAbsent(key, k -> new Bucket(capacity, perSecond, now)).take(now);
        }
    }

    /** Buckets kept now. */
    int size() {
        synchronized (buckets) {
            return buckets.size();
        }
    }

    /** Whole seconds to wait for {@code nanos}, at least 1: what {@code Retry-After} says. */
    static long retryAfterSeconds(long nanos) {
        return Math.max(1, TimeUnit.NANOSECONDS.toSeconds(nanos + 999_999_999));
    }

    /** Guarded by the map's lock. */
    private static final class Bucket {
        private final double capacity;
        private final double perSecond;
        private double tokens;
        private long last;

        Bucket(double capacity, double perSecond, long now) {
            this.capacity = capacity;
            this.perSecond = perSecond;
            this.tokens = capacity;
            this.last = now;
        }

        long take(long now) {
            tokens = Math.min(capacity, tokens + (now - last) / 1e9 * perSecond);
            last = now;
            if (tokens >= 1) {
                tokens -= 1;
                return 0;
            }
            return (long) Math.ceil((1 - tokens) / perSecond * TimeUnit.SECONDS.toNanos(1));
        }
    }
}
