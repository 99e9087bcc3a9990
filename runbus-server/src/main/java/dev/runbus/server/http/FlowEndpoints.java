package dev.runbus.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.FlowRate;
import dev.runbus.Message;
import dev.runbus.runs.FlowOverride;
import dev.runbus.runs.Runs;
import dev.runbus.server.Json;
import io.javalin.http.Context;
import java.io.IOException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The flow keys' overrides of the runs topic (docs/flow-control.md, "Overrides that outlive Redis"): listed, set and
 * cleared over HTTP as {@link Runs#setFlowOverride} does in Java.
 */
final class FlowEndpoints {

    /** Overrides on one page of {@code GET /v1/flow/overrides}, at most. */
    static final int MAX_PAGE = 1_000;

    private final Runs runs;
    private final RequestBody body;

    FlowEndpoints(Runs runs, RequestBody body) {
        this.runs = runs;
        this.body = body;
    }

    /** A page of the overrides by key, after the key {@code after}; {@code next_after} continues it. */
    void list(Context ctx) {
        int limit = Math.min(MAX_PAGE, Inputs.limit(ctx.queryParam("limit"), "limit", 100));
        String after = ctx.queryParam("after");
        if (after != null) {
            try {
                Message.checkFlowKey(after);
            } catch (IllegalArgumentException e) {
                throw ApiError.badRequest(e.getMessage(), "after");
            }
        }
        List<Map<String, Object>> out = new ArrayList<>();
        String last = null;
        for (Map.Entry<String, FlowOverride> e : runs.flowOverrides(after, limit).entrySet()) {
            out.add(view(e.getKey(), e.getValue()));
            last = e.getKey();
        }
        Map<String, Object> page = new LinkedHashMap<>();
        page.put("overrides", out);
        page.put("limit", limit);
        page.put("next_after", out.size() == limit ? last : null);
        ctx.json(page);
    }

    void put(Context ctx) {
        String type = ctx.contentType();
        if (type == null || !type.toLowerCase(java.util.Locale.ROOT).startsWith("application/json")) {
            throw new ApiError(415, "Content-Type must be application/json", null);
        }
        String flowKey = flowKey(ctx);
        FlowOverride o = parse(body.read(ctx));
        boolean applied = runs.setFlowOverride(flowKey, o);
        Map<String, Object> out = view(flowKey, o);
        out.put("applied", applied);
        ctx.json(out);
    }

    /** 204 once Redis has the workers' limits for the key again; 202 when only PostgreSQL has it (a sweep sets it). */
    void clear(Context ctx) {
        if (runs.clearFlowOverride(flowKey(ctx))) {
            ctx.status(204);
        } else {
            ctx.status(202).json(Map.of("applied", false));
        }
    }

    private static String flowKey(Context ctx) {
        String key = ctx.pathParam("flowKey");
        try {
            return Message.checkFlowKey(key);
        } catch (IllegalArgumentException e) {
            throw ApiError.badRequest(e.getMessage(), "flow_key");
        }
    }

    /** {"cap": n|null, "rate": {"permits": n, "per": "PT1S", "burst": n}|null, "weight": x|null}. */
    static FlowOverride parse(byte[] bytes) {
        JsonNode root;
        try {
            root = Json.MAPPER.readTree(bytes);
        } catch (IOException e) {
            throw ApiError.badRequest("the body is not JSON", null);
        }
        if (root == null || !root.isObject()) {
            throw ApiError.badRequest("the body must be a JSON object", null);
        }
        Integer cap = null;
        JsonNode c = root.get("cap");
        if (c != null && !c.isNull()) {
            if (!c.isIntegralNumber() || !c.canConvertToInt() || c.asInt() < 0) {
                throw ApiError.badRequest("field 'cap' must be an integer, 0 or more", "cap");
            }
            cap = c.asInt();
        }
        FlowRate rate = null;
        JsonNode r = root.get("rate");
        if (r != null && !r.isNull()) {
            rate = rate(r);
        }
        Double weight = null;
        JsonNode w = root.get("weight");
        if (w != null && !w.isNull()) {
            if (!w.isNumber() || !(w.asDouble() >= 1e-6 && w.asDouble() <= 1e6)) {
                throw ApiError.badRequest("field 'weight' must be a number from 0.000001 to 1000000", "weight");
            }
            weight = w.asDouble();
        }
        return new FlowOverride(cap, rate, weight);
    }

    private static FlowRate rate(JsonNode r) {
        if (!r.isObject()) {
            throw ApiError.badRequest("field 'rate' must be an object: permits, per, burst", "rate");
        }
        JsonNode permits = r.get("permits");
        if (permits == null || !permits.isIntegralNumber() || !permits.canConvertToInt() || permits.asInt() < 1) {
            throw ApiError.badRequest("field 'rate.permits' must be an integer, 1 or more", "rate");
        }
        Duration per = Duration.ofSeconds(1);
        JsonNode p = r.get("per");
        if (p != null && !p.isNull()) {
            try {
                per = Duration.parse(p.asText());
            } catch (DateTimeParseException e) {
                throw ApiError.badRequest("field 'rate.per' must be an ISO-8601 duration such as PT1S", "rate");
            }
        }
        int burst = 1;
        JsonNode b = r.get("burst");
        if (b != null && !b.isNull()) {
            if (!b.isIntegralNumber() || !b.canConvertToInt() || b.asInt() < 1) {
                throw ApiError.badRequest("field 'rate.burst' must be an integer, 1 or more", "rate");
            }
            burst = b.asInt();
        }
        try {
            return new FlowRate(permits.asInt(), per, burst);
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw ApiError.badRequest("field 'rate': " + e.getMessage(), "rate");
        }
    }

    private static Map<String, Object> view(String flowKey, FlowOverride o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("flow_key", flowKey);
        m.put("cap", o.cap());
        if (o.rate() == null) {
            m.put("rate", null);
        } else {
            Map<String, Object> rate = new LinkedHashMap<>();
            rate.put("permits", o.rate().permits());
            rate.put("per", o.rate().per().toString());
            rate.put("burst", o.rate().burst());
            m.put("rate", rate);
        }
        m.put("weight", o.weight());
        return m;
    }
}
