package dev.runbus.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.runs.NewRun;
import dev.runbus.server.Json;

/**
 * The body of {@code POST /v1/runs}: {@code {"session_id": "...", "user_id": "...", "input": ...,
 * "idempotency_key": "...", "flow_key": "...", "priority": n, "flow_sub_key": "...", "run_at" or "delay": ...,
 * "expire_after": "PT5M", "timeout": "PT1M"}} ({@link RunDelay}; the last two ISO-8601 durations). {@code input} is a string or any JSON value (stored as its JSON text). The key may come in the {@code Idempotency-Key} header instead;
 * if both are given they must agree.
 */
final class SubmitRequest {

    private SubmitRequest() {
    }

    /** A submission: the run, and how long until it is due (zero: at once). */
    record Parsed(NewRun run, java.time.Duration delay) {
    }

    static Parsed parse(byte[] body, String headerKey, java.time.Instant now) {
        JsonNode root;
        try {
            root = Json.MAPPER.readTree(body);
        } catch (JsonProcessingException e) {
            throw ApiError.badRequest("body is not valid JSON: " + e.getOriginalMessage(), null);
        } catch (java.io.IOException e) {
            throw ApiError.badRequest("body cannot be read: " + e.getMessage(), null);
        }
        if (root == null || !root.isObject()) {
            throw ApiError.badRequest("body must be a JSON object", null);
        }
        String session = requiredText(root, "session_id");
        String user = requiredText(root, "user_id");
        JsonNode input = root.get("input");
        if (input == null || input.isNull()) {
            throw ApiError.badRequest("field 'input' is required", "input");
        }
        String inputText = input.isTextual() ? input.asText() : input.toString();
        if (inputText.indexOf('\u0000') >= 0) {
            throw ApiError.badRequest("field 'input' must not contain the NUL character", "input");
        }
        String bodyKey = null;
        JsonNode k = root.get("idempotency_key");
        if (k != null && !k.isNull()) {
            if (!k.isTextual() || k.asText().isBlank()) {
                throw ApiError.badRequest("field 'idempotency_key' must be a non-empty string", "idempotency_key");
            }
            bodyKey = k.asText();
        }
        String header = headerKey == null || headerKey.isBlank() ? null : headerKey.trim();
        if (header != null && bodyKey != null && !header.equals(bodyKey)) {
            throw ApiError.badRequest("the Idempotency-Key header and the field 'idempotency_key' differ",
                    "idempotency_key");
        }
        String key = header != null ? header : bodyKey;
        if (key != null && key.chars().anyMatch(Character::isISOControl)) {
            throw ApiError.badRequest("idempotency key must not contain control characters", "idempotency_key");
        }
        if (key != null && key.length() > NewRun.MAX_KEY_LENGTH) {
            throw ApiError.badRequest("idempotency key is longer than " + NewRun.MAX_KEY_LENGTH + " characters",
                    "idempotency_key");
        }
        String flowKey = optionalNonEmptyText(root, "flow_key");
        int priority = dev.runbus.Message.DEFAULT_PRIORITY;
        JsonNode p = root.get("priority");
        if (p != null && !p.isNull()) {
            if (!p.isIntegralNumber() || !p.canConvertToInt() || p.asInt() < dev.runbus.Message.MIN_PRIORITY
                    || p.asInt() > dev.runbus.Message.MAX_PRIORITY) {
                throw ApiError.badRequest("field 'priority' must be an integer from " + dev.runbus.Message.MIN_PRIORITY
                        + " to " + dev.runbus.Message.MAX_PRIORITY, "priority");
            }
            priority = p.asInt();
        }
        String flowSubKey = optionalNonEmptyText(root, "flow_sub_key");
        return new Parsed(new NewRun(session, user, inputText, key, flowKey, priority, flowSubKey,
                optionalDuration(root, "expire_after"), optionalDuration(root, "timeout")), RunDelay.of(root, now));
    }

    /** The body's name of a {@link NewRun} component: {@code userId} is {@code user_id}. */
    static String jsonField(String component) {
        return component.replaceAll("([A-Z])", "_$1").toLowerCase(java.util.Locale.ROOT);
    }

    /** The ISO-8601 duration of {@code field}, null when absent or null; 400 naming it when it is not one. */
    private static java.time.Duration optionalDuration(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) {
            return null;
        }
        try {
            if (!n.isTextual()) {
                throw new java.time.format.DateTimeParseException("not a string", n.toString(), 0);
            }
            return java.time.Duration.parse(n.asText());
        } catch (java.time.format.DateTimeParseException e) {
            throw ApiError.badRequest("field '" + field + "' must be an ISO-8601 duration, like PT5M", field);
        }
    }

    /** The text of {@code field}, null when absent or null; 400 naming it when it is not a non-empty string. */
    private static String optionalNonEmptyText(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isTextual() || n.asText().isEmpty()) {
            throw ApiError.badRequest("field '" + field + "' must be a non-empty string", field);
        }
        return n.asText();
    }

    private static String requiredText(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) {
            throw ApiError.badRequest("field '" + field + "' is required", field);
        }
        if (!n.isTextual() || n.asText().isBlank()) {
            throw ApiError.badRequest("field '" + field + "' must be a non-empty string", field);
        }
        if (n.asText().indexOf('\u0000') >= 0) {
            throw ApiError.badRequest("field '" + field + "' must not contain the NUL character", field);
        }
        return n.asText();
    }
}
