package dev.runbus;

import java.time.Duration;
import java.util.Objects;

/**
 * A rate limit per flow key ({@link SubscribeOptions#flowRate()}, docs/flow-control.md): the entries of one
 * {@link Message#flowKey() flow key} are let into the stream at most {@code permits} per {@code per} in the long run,
 * and up to {@code burst} at once after the key was idle. It is GCRA on the Redis clock, counted where the key's
 * entries wait: over any window of length W, at most {@code burst + W × permits / per} entries of a key are let in.
 * A handler starts at or after its entry was let in, so starts follow the same rate, except that entries a consumer
 * read and had not started yet may start together.
 *
 * @param permits entries per {@code per}, 1 or more
 * @param per     the period of {@code permits}, 1 ms or more; together they leave at least 1 µs between two entries
 * @param burst   entries let in at once after an idle time, 1 or more
 */
public record FlowRate(int permits, Duration per, int burst) {

    public FlowRate {
        if (permits < 1) {
            throw new IllegalArgumentException("a flow rate's permits must be 1 or more, got " + permits);
        }
        Objects.requireNonNull(per, "per");
        if (per.toMillis() < 1) {
            throw new IllegalArgumentException("a flow rate's period must be 1 ms or more, got " + per);
        }
        if (per.toNanos() / permits < 1_000) {
            throw new IllegalArgumentException("a flow rate of " + permits + " per " + per
                    + " leaves less than 1 µs between two entries");
        }
        if (burst < 1) {
            throw new IllegalArgumentException("a flow rate's burst must be 1 or more, got " + burst);
        }
    }

    /** {@code permits} per second, one at a time. */
    public static FlowRate perSecond(int permits) {
        return new FlowRate(permits, Duration.ofSeconds(1), 1);
    }

    /** {@code permits} per {@code per}, one at a time. */
    public static FlowRate of(int permits, Duration per) {
        return new FlowRate(permits, per, 1);
    }

    /** This rate with up to {@code burst} entries at once after an idle time. */
    public FlowRate withBurst(int burst) {
        return new FlowRate(permits, per, burst);
    }

    /** The time between two entries in the long run, in milliseconds (fractional). */
    public double intervalMillis() {
        return per.toNanos() / 1e6 / permits;
    }
}
