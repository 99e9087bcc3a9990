package dev.runbus.server.http;

import java.math.BigInteger;
import java.util.regex.Pattern;

/**
 * Checks of what requests carry in paths and query parameters, before any of it reaches Redis or PostgreSQL:
 * a malformed id is the client's mistake (400 naming the field), never a server error.
 */
public final class Inputs {

    /** {@code 1700000000000-0}, optionally {@code @3} for a partition. */
    private static final Pattern STREAM_ID = Pattern.compile("(\\d{1,20})-(\\d{1,20})(@\\d{1,6})?");
    /** Ids of scheduled entries: hexadecimal time and sequence, a dash, hexadecimal random; optionally a partition. */
    private static final Pattern SCHEDULED_ID = Pattern.compile("[0-9a-f]{1,24}-[0-9a-f]{1,16}(@\\d{1,6})?");
    private static final BigInteger MAX_ID_PART = new BigInteger("18446744073709551615");

    private Inputs() {
    }

    /** A stream id as Redis writes them (both parts at most 2^64 - 1), with an optional partition. */
    public static String streamId(String value, String field) {
        var m = value == null ? null : STREAM_ID.matcher(value);
        if (m == null || !m.matches() || new BigInteger(m.group(1)).compareTo(MAX_ID_PART) > 0
                || new BigInteger(m.group(2)).compareTo(MAX_ID_PART) > 0) {
            throw ApiError.badRequest(field + " must be a stream id like 1700000000000-0 (or 1700000000000-0@3 for"
                    + " partition 3)", field);
        }
        return value;
    }

    static String scheduledId(String value, String field) {
        if (value == null || !SCHEDULED_ID.matcher(value).matches()) {
            throw ApiError.badRequest(field + " must be a scheduled entry's id as runbus scheduled list shows it",
                    field);
        }
        return value;
    }

    /** A run id: a UUID in its canonical form ({@code UUID.fromString} also takes shorter, ambiguous forms). */
    public static java.util.UUID runId(String value, String field) {
        if (value == null
                || !value.matches("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")) {
            throw ApiError.badRequest("run id must be a UUID", field);
        }
        return java.util.UUID.fromString(value);
    }

    /** Entries one listing may read from Redis, summed over the partitions it merges. */
    public static final int MAX_ENTRIES_READ = 1_000;

    /**
     * The page a listing merging {@code partitions} partitions may take: {@code limit}, within {@link
     * #MAX_ENTRIES_READ} (a listing across partitions reads up to a page from each), and at least one.
     */
    public static int pageOf(int limit, int partitions) {
        return Math.min(limit, Math.max(1, MAX_ENTRIES_READ / Math.max(1, partitions)));
    }

    /**
     * What a name may not contain: controls, and the characters Unicode counts as spaces (the no-break ones too),
     * which a reader cannot tell apart in a listing. Written as the OpenAPI document's {@code pattern} writes it,
     * so that the two are one rule (OpenApiConstraintsTest holds them to it).
     */
    private static final String NOT_IN_NAMES = "\\u0000-\\u0020\\u007f-\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f"
            + "\\u205f\\u3000";
    private static final Pattern TOPIC = Pattern.compile("[^" + NOT_IN_NAMES + "{}#]{1,200}");
    private static final Pattern GROUP = Pattern.compile("[^" + NOT_IN_NAMES + "]{1,200}");

    /** Topic and group names: 1 to 200 characters, no spaces or controls; topics also no braces or '#'. */
    public static String name(String value, String field, boolean topic) {
        if (value == null || !(topic ? TOPIC : GROUP).matcher(value).matches()) {
            throw ApiError.badRequest(field + " must have 1 to 200 characters without spaces or control characters"
                    + (topic ? ", braces or '#'" : ""), field);
        }
        return value;
    }

    /** A whole number between 1 and 10000, or {@code fallback} when absent. */
    static int limit(String value, String field, int fallback) {
        if (value == null) {
            return fallback;
        }
        if (!value.matches("\\d{1,5}")) {
            throw ApiError.badRequest("query parameter '" + field + "' must be a number between 1 and 10000", field);
        }
        int n = Integer.parseInt(value);
        if (n < 1 || n > 10_000) {
            throw ApiError.badRequest("query parameter '" + field + "' must be a number between 1 and 10000", field);
        }
        return n;
    }
}
