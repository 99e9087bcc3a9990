package dev.runbus.server.cli;

import dev.runbus.runs.RunQuery;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A point in time given to a command ({@code dlq replay --since}, {@code runs prune --finished-before}): an RFC 3339
 * time with an offset, as the HTTP API takes, or a duration counted back from now ({@code 90m}, {@code 12h},
 * {@code 30d}), which is what an operator usually means.
 */
final class TimeArgument {

    private static final Pattern AGO = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

    private TimeArgument() {
    }

    /**
     * @param option the option's name, for the error
     * @throws IllegalArgumentException naming the option and both forms
     */
    static Instant parse(String value, String option, Instant now) {
        Instant t = ago(value, now);
        if (t == null) {
            try {
                t = OffsetDateTime.parse(value).toInstant();
            } catch (DateTimeParseException e) {
                t = null;
            }
        }
        if (t == null || !RunQuery.inRange(t)) {
            throw new IllegalArgumentException(option + " must be an RFC 3339 time with an offset in the years 0001 to "
                    + "9999 (2026-01-01T12:00:00Z) or a duration back from now (90m, 12h, 30d), not '" + value + "'");
        }
        return t;
    }

    /** {@code now} less the duration {@code value} gives, or null when it gives none. */
    private static Instant ago(String value, Instant now) {
        Matcher m = AGO.matcher(value);
        if (!m.matches()) {
            return null;
        }
        long n = Long.parseLong(m.group(1));
        Duration d = switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
        };
        return now.minus(d);
    }
}
