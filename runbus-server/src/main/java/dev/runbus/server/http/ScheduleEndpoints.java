package dev.runbus.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.runs.Schedule;
import dev.runbus.runs.ScheduleNotFoundException;
import dev.runbus.runs.ScheduleState;
import dev.runbus.runs.Schedules;
import io.javalin.http.Context;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Recurring schedules over HTTP (docs/schedules.md, docs/http-api.md), as {@link Schedules} does in Java: listed, read,
 * created or replaced, paused, resumed, deleted, previewed and backfilled.
 */
final class ScheduleEndpoints {

    /** Schedules on one page of {@code GET /v1/schedules}, at most. */
    static final int MAX_PAGE = 1_000;

    private final Schedules schedules;
    private final RequestBody body;

    ScheduleEndpoints(Schedules schedules, RequestBody body) {
        this.schedules = schedules;
        this.body = body;
    }

    void list(Context ctx) {
        int limit = Math.min(MAX_PAGE, Inputs.limit(ctx.queryParam("limit"), "limit", 100));
        String after = ctx.queryParam("after");
        if (after != null) {
            ScheduleJson.checkName(after, "after");
        }
        List<Map<String, Object>> out = new ArrayList<>();
        String last = null;
        for (ScheduleState s : schedules.list(after, limit)) {
            out.add(ScheduleJson.view(s));
            last = s.schedule().name();
        }
        Map<String, Object> page = new LinkedHashMap<>();
        page.put("schedules", out);
        page.put("limit", limit);
        page.put("next_after", out.size() == limit ? last : null);
        ctx.json(page);
    }

    void get(Context ctx) {
        String name = name(ctx);
        ctx.json(ScheduleJson.view(schedules.get(name).orElseThrow(() -> ApiError.notFound("no schedule " + name))));
    }

    /** Creates (201) or replaces (200) the schedule of the path's name. */
    void put(Context ctx) {
        String name = name(ctx);
        requireJson(ctx);
        Schedule schedule = ScheduleJson.parse(name, body.read(ctx));
        boolean existed = schedules.get(name).isPresent();
        ScheduleState state = schedules.put(schedule);
        ctx.status(existed ? 200 : 201).json(ScheduleJson.view(state));
    }

    void delete(Context ctx) {
        String name = name(ctx);
        if (!schedules.delete(name)) {
            throw ApiError.notFound("no schedule " + name);
        }
        ctx.status(204);
    }

    void pause(Context ctx) {
        String name = name(ctx);
        try {
            ctx.json(ScheduleJson.view(schedules.pause(name)));
        } catch (ScheduleNotFoundException e) {
            throw ApiError.notFound(e.getMessage());
        }
    }

    void resume(Context ctx) {
        String name = name(ctx);
        try {
            ctx.json(ScheduleJson.view(schedules.resume(name)));
        } catch (ScheduleNotFoundException e) {
            throw ApiError.notFound(e.getMessage());
        }
    }

    /** The next {@code n} fire times (default 10, at most 1000). */
    void preview(Context ctx) {
        String name = name(ctx);
        int n = Inputs.limit(ctx.queryParam("n"), "n", 10);
        if (n > Schedules.MAX_FIRES) {
            throw ApiError.badRequest("n must be 1 to " + Schedules.MAX_FIRES, "n");
        }
        ctx.json(Map.of("name", name, "fires", schedules.preview(name, n).stream().map(Instant::toString).toList()));
    }

    /** {@code {"from": instant, "to": instant}}: a run for each fire time in the range; answers how many were made. */
    void backfill(Context ctx) {
        String name = name(ctx);
        requireJson(ctx);
        JsonNode root = ScheduleJson.object(body.read(ctx));
        Instant from = ScheduleJson.instant(root, "from", true);
        Instant to = ScheduleJson.instant(root, "to", true);
        try {
            ctx.json(Map.of("name", name, "made", schedules.backfill(name, from, to)));
        } catch (ScheduleNotFoundException e) {
            throw ApiError.notFound(e.getMessage());
        }
    }

    private static void requireJson(Context ctx) {
        String type = ctx.contentType();
        if (type == null || !type.toLowerCase(Locale.ROOT).startsWith("application/json")) {
            throw new ApiError(415, "Content-Type must be application/json", null);
        }
    }

    private static String name(Context ctx) {
        return ScheduleJson.checkName(ctx.pathParam("name"), "name");
    }

}
