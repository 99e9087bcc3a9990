package dev.runbus.server.http;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Requests being answered right now, per caller and in all, each under a cap. The submission rate counts requests
 * as they start; a request whose body arrives slowly holds a Jetty thread for up to {@code --request-timeout}
 * all the same, so a few hundred of them at once take every thread. Counting those in flight bounds what one
 * caller can hold ({@code perCaller}) and what all callers together can ({@code overall}, below Jetty's pool,
 * so that the threads left over still answer {@code /health} and other callers' refusals).
 *
 * <p>A caller has an entry only while one of its requests is in flight: the map never holds more entries than
 * {@code overall}, however many addresses come and go.
 */
final class RequestsInFlight {

    /** Why {@link #acquire} refused, or that it did not. */
    enum Outcome { ADMITTED, CALLER_AT_CAP, SERVER_AT_CAP }

    private final int perCaller;
    private final int overall;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<String, Integer> byCaller = new ConcurrentHashMap<>();

    /** @param perCaller at least 1; @param overall at least 1 */
    RequestsInFlight(int perCaller, int overall) {
        if (perCaller < 1 || overall < 1) {
            throw new IllegalArgumentException("caps must be at least 1, got " + perCaller + " and " + overall);
        }
        this.perCaller = perCaller;
        this.overall = overall;
    }

    /** Takes a place for one request of {@code key}; every {@link Outcome#ADMITTED} needs one {@link #release}. */
    Outcome acquire(String key) {
        if (total.incrementAndGet() > overall) {
            total.decrementAndGet();
            return Outcome.SERVER_AT_CAP;
        }
        boolean[] taken = {false};
        byCaller.compute(key, (k, n) -> {
            int held = n == null ? 0 : n;
            if (held >= perCaller) {
                return n;
            }
            taken[0] = true;
            return held + 1;
        });
        if (!taken[0]) {
            total.decrementAndGet();
            return Outcome.CALLER_AT_CAP;
        }
        return Outcome.ADMITTED;
    }

    /** Gives back the place of one admitted request of {@code key}; the caller's entry goes with its last one. */
    void release(String key) {
        byCaller.computeIfPresent(key, (k, n) -> n <= 1 ? null : n - 1);
        total.decrementAndGet();
    }

    /** Requests in flight in all. */
    int total() {
        return total.get();
    }

    /** Callers with a request in flight: the entries the map holds. */
    int callers() {
        return byCaller.size();
    }

    int perCaller() {
        return perCaller;
    }

    int overall() {
        return overall;
    }
}
