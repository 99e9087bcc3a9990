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

    private static final java.util.regex.Pattern TEXT =
            java.util.regex.Pattern.compile("(\\d{1,9})/(\\d{1,9})(ms|s|m|h)(?:,(\\d{1,9}))?");

    /**
     * A rate written {@code PERMITS/PERIOD[,BURST]}, as configuration files and command lines write it: {@code 5/1s}
     * (5 a second, burst 1), {@code 100/1m,20} (100 a minute, up to 20 at once); the period in {@code ms}, {@code s},
     * {@code m} or {@code h}.
     *
     * @throws IllegalArgumentException naming what is wrong with {@code text}
     */
    public static FlowRate parse(String text) {
        Objects.requireNonNull(text, "text");
        java.util.regex.Matcher m = TEXT.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("expected PERMITS/PERIOD[,BURST], e.g. 5/1s or 100/1m,20, got '"
                    + text + "'");
        }
        long n = Long.parseLong(m.group(2));
        Duration per = switch (m.group(3)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofHours(n);
        };
        return new FlowRate(Integer.parseInt(m.group(1)), per, m.group(4) == null ? 1 : Integer.parseInt(m.group(4)));
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
