package dev.runbus.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.runs.InvalidScheduleException;
import dev.runbus.runs.MisfirePolicy;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.OverlapPolicy;
import dev.runbus.runs.Schedule;
import dev.runbus.runs.ScheduleState;
import dev.runbus.server.Json;
import java.io.IOException;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A schedule as JSON, for the HTTP API ({@code PUT /v1/schedules/{name}}, its views) and the CLI
 * ({@code runbus schedules put}): the body read into a {@link Schedule}, each mistake a 400 naming its field, and a
 * {@link ScheduleState} written out.
 */
public final class ScheduleJson {

    private ScheduleJson() {
    }

    /** The name, or a 400 naming {@code field} when it cannot be a schedule's. */
    public static String checkName(String name, String field) {
        try {
            Schedule.checkName(name);
            return name;
        } catch (InvalidScheduleException e) {
            throw ApiError.badRequest(field + " " + e.problem(), field);
        }
    }

    static JsonNode object(byte[] bytes) {
        JsonNode root;
        try {
            root = Json.MAPPER.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw ApiError.badRequest("body is not valid JSON: " + e.getOriginalMessage(), null);
        } catch (IOException e) {
            throw ApiError.badRequest("body cannot be read: " + e.getMessage(), null);
        }
        if (root == null || !root.isObject()) {
            throw ApiError.badRequest("body must be a JSON object", null);
        }
        return root;
    }

    /**
     * The body of {@code PUT /v1/schedules/{name}}: {@code cron} (with {@code zone}) or {@code every}; {@code jitter},
     * {@code start_at}, {@code end_at}, {@code paused}; {@code overlap} ({@code skip}, {@code buffer} with
     * {@code overlap_buffer}, {@code cancel_running}, {@code allow_all}); {@code misfire} ({@code run_once},
     * {@code skip}, {@code catch_up} with {@code catch_up_max} and {@code catch_up_window}) and {@code misfire_grace};
     * and {@code run}, a body of {@code POST /v1/runs} without its key and delay.
     */
    public static Schedule parse(String name, byte[] bytes) {
        JsonNode root = object(bytes);
        String cron = text(root, "cron");
        Duration every = duration(root, "every");
        if ((cron == null) == (every == null)) {
            throw ApiError.badRequest("give exactly one of 'cron' and 'every'", cron == null ? "cron" : "every");
        }
        JsonNode runNode = root.get("run");
        if (runNode == null || !runNode.isObject()) {
            throw ApiError.badRequest("field 'run' is required: an object with session_id, user_id and input", "run");
        }
        for (String refused : List.of("idempotency_key", "run_at", "delay")) {
            if (runNode.has(refused)) {
                throw ApiError.badRequest("field 'run." + refused + "' cannot be given: each fire's run is keyed and "
                        + "timed by the fire", "run." + refused);
            }
        }
        NewRun run;
        try {
            run = SubmitRequest.parse(runNode.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8), null,
                    Instant.now()).run();
        } catch (ApiError e) {
            throw ApiError.badRequest("in 'run': " + e.getMessage(), e.field == null ? "run" : "run." + e.field);
        }
        try {
            Schedule s = cron != null ? Schedule.cron(name, cron, run) : Schedule.every(name, every, run);
            String zone = text(root, "zone");
            if (zone != null) {
                try {
                    s = s.withZone(ZoneId.of(zone));
                } catch (DateTimeException e) {
                    throw ApiError.badRequest("field 'zone' must be an IANA time zone such as Europe/London", "zone");
                }
            }
            Duration jitter = duration(root, "jitter");
            if (jitter != null) {
                s = s.withJitter(jitter);
            }
            s = s.withStartAt(instant(root, "start_at", false)).withEndAt(instant(root, "end_at", false));
            JsonNode paused = root.get("paused");
            if (paused != null && !paused.isNull()) {
                if (!paused.isBoolean()) {
                    throw ApiError.badRequest("field 'paused' must be true or false", "paused");
                }
                s = s.withPaused(paused.asBoolean());
            }
            return s.withOverlap(overlap(root)).withMisfire(misfire(root));
        } catch (InvalidScheduleException e) {
            String field = switch (e.field()) {
                case "interval" -> "every";
                case "startAt" -> "start_at";
                case "endAt" -> "end_at";
                default -> e.field();
            };
            throw ApiError.badRequest("field '" + field + "' " + e.problem(), field);
        }
    }

    private static OverlapPolicy overlap(JsonNode root) {
        String overlap = text(root, "overlap");
        Integer buffer = integer(root, "overlap_buffer");
        if (buffer != null && !"buffer".equals(overlap)) {
            throw ApiError.badRequest("field 'overlap_buffer' needs 'overlap': 'buffer'", "overlap_buffer");
        }
        if (overlap == null) {
            return OverlapPolicy.skip();
        }
        return switch (overlap) {
            case "skip" -> OverlapPolicy.skip();
            case "buffer" -> {
                try {
                    yield OverlapPolicy.buffer(buffer == null ? 1 : buffer);
                } catch (InvalidScheduleException e) {
                    throw ApiError.badRequest("field 'overlap_buffer' must be 1 to " + OverlapPolicy.MAX_BUFFER,
                            "overlap_buffer");
                }
            }
            case "cancel_running" -> OverlapPolicy.cancelRunning();
            case "allow_all" -> OverlapPolicy.allowAll();
            default -> throw ApiError.badRequest("field 'overlap' must be skip, buffer, cancel_running or allow_all",
                    "overlap");
        };
    }

    private static MisfirePolicy misfire(JsonNode root) {
        String misfire = text(root, "misfire");
        if (!"catch_up".equals(misfire)) {
            for (String field : List.of("catch_up_max", "catch_up_window")) {
                if (root.hasNonNull(field)) {
                    throw ApiError.badRequest("field '" + field + "' needs 'misfire': 'catch_up'", field);
                }
            }
        }
        MisfirePolicy p;
        if (misfire == null || misfire.equals("run_once")) {
            p = MisfirePolicy.runOnce();
        } else if (misfire.equals("skip")) {
            p = MisfirePolicy.skip();
        } else if (misfire.equals("catch_up")) {
            Integer max = integer(root, "catch_up_max");
            Duration window = duration(root, "catch_up_window");
            try {
                p = MisfirePolicy.catchUp(max == null ? 1 : max, window == null ? Duration.ofHours(1) : window);
            } catch (InvalidScheduleException e) {
                throw ApiError.badRequest("field 'misfire' " + e.problem(), max != null && (max < 1
                        || max > MisfirePolicy.MAX_CATCH_UP) ? "catch_up_max" : "catch_up_window");
            }
        } else {
            throw ApiError.badRequest("field 'misfire' must be run_once, skip or catch_up", "misfire");
        }
        Duration grace = duration(root, "misfire_grace");
        if (grace != null) {
            try {
                p = p.withGrace(grace);
            } catch (InvalidScheduleException e) {
                throw ApiError.badRequest("field 'misfire_grace' must be 1 s to a day, like PT1M", "misfire_grace");
            }
        }
        return p;
    }

    private static String text(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isTextual() || n.asText().isBlank()) {
            throw ApiError.badRequest("field '" + field + "' must be a non-empty string", field);
        }
        return n.asText();
    }

    private static Integer integer(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isIntegralNumber() || !n.canConvertToInt()) {
            throw ApiError.badRequest("field '" + field + "' must be an integer", field);
        }
        return n.asInt();
    }

    private static Duration duration(JsonNode root, String field) {
        String text = text(root, field);
        if (text == null) {
            return null;
        }
        try {
            return Duration.parse(text);
        } catch (DateTimeParseException e) {
            throw ApiError.badRequest("field '" + field + "' must be an ISO-8601 duration, like PT15M", field);
        }
    }

    static Instant instant(JsonNode root, String field, boolean required) {
        String text = text(root, field);
        if (text == null) {
            if (required) {
                throw ApiError.badRequest("field '" + field + "' is required", field);
            }
            return null;
        }
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            throw ApiError.badRequest("field '" + field + "' must be an ISO-8601 instant, like 2026-01-01T00:00:00Z",
                    field);
        }
    }

    /** A schedule as JSON: its definition, its next fire and what it has done. */
    public static Map<String, Object> view(ScheduleState state) {
        Schedule s = state.schedule();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", s.name());
        m.put("cron", s.cron() == null ? null : s.cron().toString());
        m.put("every", s.interval() == null ? null : s.interval().toString());
        m.put("zone", s.zone().getId());
        m.put("jitter", s.jitter().toString());
        m.put("start_at", text(s.startAt()));
        m.put("end_at", text(s.endAt()));
        m.put("paused", s.paused());
        m.put("overlap", s.overlap().kind().name().toLowerCase(Locale.ROOT));
        m.put("overlap_buffer", s.overlap().buffer());
        m.put("misfire", s.misfire().kind().name().toLowerCase(Locale.ROOT));
        m.put("catch_up_max", s.misfire().catchUpMax());
        m.put("catch_up_window", s.misfire().catchUpWindow().toString());
        m.put("misfire_grace", s.misfire().grace().toString());
        NewRun r = s.run();
        Map<String, Object> run = new LinkedHashMap<>();
        run.put("session_id", r.sessionId());
        run.put("user_id", r.userId());
        run.put("input", r.input());
        run.put("flow_key", r.flowKey());
        run.put("priority", r.priority());
        run.put("flow_sub_key", r.flowSubKey());
        run.put("expire_after", r.expireAfter() == null ? null : r.expireAfter().toString());
        run.put("timeout", r.timeout() == null ? null : r.timeout().toString());
        m.put("run", run);
        m.put("next_fire_at", text(state.nextFireAt()));
        m.put("last_fire_at", text(state.lastFireAt()));
        m.put("fired", state.fired());
        m.put("skipped_overlap", state.skippedOverlap());
        m.put("missed", state.missed());
        m.put("caught_up", state.caughtUp());
        m.put("waiting", state.waiting());
        m.put("created_at", text(state.createdAt()));
        m.put("updated_at", text(state.updatedAt()));
        return m;
    }

    private static String text(Instant at) {
        return at == null ? null : at.toString();
    }
}
