package dev.runbus.server.http;

import dev.runbus.runs.RunPosition;
import dev.runbus.runs.RunQuery;
import dev.runbus.runs.RunStatus;
import io.javalin.http.Context;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The query parameters of {@code GET /v1/runs}, checked: each one that cannot be used is a 400 naming it, before
 * PostgreSQL is asked anything (an id PostgreSQL cannot hold or compare, a NUL, a time outside its range answered
 * 503 from PostgreSQL's error). The cursor carries the last run's position ({@code <created_at>,<id>}) under the
 * listing's name (see {@link Cursor}).
 */
public final class RunListRequest {

    static final String LISTING = "runs";
    private static final String STATUSES = Arrays.stream(RunStatus.values()).map(RunStatus::sql)
            .collect(Collectors.joining(", "));

    private RunListRequest() {
    }

    static RunQuery parse(Context ctx) {
        return parse(ctx::queryParam);
    }

    /**
     * The query the parameters ask for, each read through {@code param} (null: not given).
     *
     * A parameter that cannot be used is refused with a 400 naming it.
     */
    public static RunQuery parse(Function<String, String> param) {
        return parse(param, RunListRequest::asQueryParameter);
    }

    /**
     * {@link #parse(Function)} for another surface than the query string (the {@code runs list} command): an error's
     * message names each parameter as {@code named} does ({@code limit} → {@code --limit}); its {@link ApiError}'s
     * field is the parameter's own name still.
     */
    public static RunQuery parse(Function<String, String> param, Function<String, String> named) {
        RunQuery q = RunQuery.newest().withLimit(limit(param.apply("limit"), named))
                .withStatus(status(param.apply("status"), named))
                .withUser(id(param.apply("user"), "user", named))
                .withSession(id(param.apply("session"), "session", named))
                .createdBetween(instant(param.apply("created_after"), "created_after", named),
                        instant(param.apply("created_before"), "created_before", named));
        RunPosition after = position(param.apply("cursor"), named);
        return after == null ? q : q.after(after);
    }

    /** How the API's errors name a parameter: {@code query parameter 'limit'}, and the cursor as {@code cursor}. */
    private static String asQueryParameter(String field) {
        return field.equals("cursor") ? field : "query parameter '" + field + "'";
    }

    /** The cursor that continues after {@code p}. */
    public static String cursor(RunPosition p) {
        return Cursor.of(LISTING, p.createdAt() + "," + p.id());
    }

    private static int limit(String value, Function<String, String> named) {
        if (value == null) {
            return RunQuery.DEFAULT_LIMIT;
        }
        if (!value.matches("\\d{1,3}") || Integer.parseInt(value) < 1 || Integer.parseInt(value) > RunQuery.MAX_LIMIT) {
            throw ApiError.badRequest(named.apply("limit") + " must be a number between 1 and " + RunQuery.MAX_LIMIT,
                    "limit");
        }
        return Integer.parseInt(value);
    }

    private static RunStatus status(String value, Function<String, String> named) {
        if (value == null) {
            return null;
        }
        for (RunStatus s : RunStatus.values()) {
            if (s.sql().equals(value.toLowerCase(Locale.ROOT))) {
                return s;
            }
        }
        throw ApiError.badRequest(named.apply("status") + " must be one of " + STATUSES, "status");
    }

    /** An id a run can have ({@link RunQuery#idProblem}): a longer one, or one with a NUL, finds nothing anyway. */
    private static String id(String value, String field, Function<String, String> named) {
        String problem = value == null ? null : RunQuery.idProblem(value);
        if (problem != null) {
            throw ApiError.badRequest(named.apply(field) + " " + problem, field);
        }
        return value;
    }

    /**
     * RFC 3339: a date, a time and an offset ({@code 2026-01-01T12:00:00Z}, {@code …+02:00}), in the years 1 to 9999
     * ({@link RunQuery#EARLIEST}, {@link RunQuery#LATEST}); Java would also read {@code +300000-01-01T00:00:00Z}.
     */
    private static Instant instant(String value, String field, Function<String, String> named) {
        if (value == null) {
            return null;
        }
        Instant t;
        try {
            t = OffsetDateTime.parse(value).toInstant();
        } catch (DateTimeParseException e) {
            t = null;
        }
        if (t == null || !RunQuery.inRange(t)) {
            throw ApiError.badRequest(named.apply(field) + " must be an RFC 3339 time with an offset in the"
                    + " years 0001 to 9999, like 2026-01-01T12:00:00Z", field);
        }
        return t;
    }

    /**
     * A position this listing could have handed out, written as {@link #cursor} writes it: a time in the range of
     * {@link RunQuery#inRange} and a run id in its canonical form. Anything else in a well-formed cursor is the
     * client's mistake, refused before PostgreSQL sees it.
     */
    private static RunPosition position(String cursor, Function<String, String> named) {
        String text;
        try {
            text = Cursor.position(cursor, LISTING);
        } catch (ApiError e) {
            throw badCursor(named);
        }
        if (text == null) {
            return null;
        }
        int comma = text.indexOf(',');
        RunPosition p;
        try {
            if (comma < 0) {
                throw new IllegalArgumentException("no comma");
            }
            p = new RunPosition(Instant.parse(text.substring(0, comma)), Inputs.runId(text.substring(comma + 1), "cursor"));
        } catch (IllegalArgumentException | DateTimeParseException | ApiError e) {
            p = null;
        }
        if (p == null || !RunQuery.inRange(p.createdAt())) {
            throw badCursor(named);
        }
        return p;
    }

    private static ApiError badCursor(Function<String, String> named) {
        return ApiError.badRequest(named.apply("cursor") + " must be a next_cursor as this listing returned it",
                "cursor");
    }
}
