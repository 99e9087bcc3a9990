package dev.runbus.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.runs.Runs;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * When a submitted run is due: the body's {@code run_at} (RFC 3339, with an offset) or {@code delay} (ISO-8601
 * duration, {@code PT10M}), not both, at most {@link Runs#MAX_DELAY} ahead. {@code run_at} is turned into a delay
 * by this server's clock; the delay then runs on the Redis server's clock, like every delayed publish. A
 * {@code run_at} in the past is due at once.
 */
final class RunDelay {

    private RunDelay() {
    }

    /** The delay the body asks for; zero when it names none. */
    static Duration of(JsonNode root, Instant now) {
        JsonNode at = root.get("run_at");
        JsonNode delay = root.get("delay");
        boolean hasAt = at != null && !at.isNull();
        boolean hasDelay = delay != null && !delay.isNull();
        if (hasAt && hasDelay) {
            throw ApiError.badRequest("give run_at or delay, not both", "run_at");
        }
        if (hasAt) {
            return bounded(Duration.between(now, instant(at)), "run_at");
        }
        return hasDelay ? bounded(duration(delay), "delay") : Duration.ZERO;
    }

    private static Instant instant(JsonNode at) {
        try {
            if (!at.isTextual()) {
                throw new DateTimeParseException("not a string", at.toString(), 0);
            }
            return OffsetDateTime.parse(at.asText()).toInstant();
        } catch (DateTimeParseException e) {
            throw ApiError.badRequest("field 'run_at' must be an RFC 3339 time with an offset, like"
                    + " 2026-01-01T12:00:00Z", "run_at");
        }
    }

    private static Duration duration(JsonNode delay) {
        try {
            if (!delay.isTextual()) {
                throw new DateTimeParseException("not a string", delay.toString(), 0);
            }
            return Duration.parse(delay.asText());
        } catch (DateTimeParseException e) {
            throw ApiError.badRequest("field 'delay' must be an ISO-8601 duration, like PT10M", "delay");
        }
    }

    private static Duration bounded(Duration d, String field) {
        if (field.equals("delay") && d.isNegative()) {
            throw ApiError.badRequest("field 'delay' must not be negative", field);
        }
        if (d.compareTo(Runs.MAX_DELAY) > 0) {
            throw ApiError.badRequest("field '" + field + "' must be at most " + Runs.MAX_DELAY.toDays()
                    + " days ahead", field);
        }
        return d.isNegative() ? Duration.ZERO : d;
    }
}
