package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import java.io.InputStream;
import java.math.BigDecimal;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI document's constraints are the server's: for every parameter and body field the document constrains
 * (a pattern, lengths, bounds, an enumeration), values on both sides of each constraint, made from the
 * parameter's example, go to a real serve, and the server refuses with a 400 naming that parameter exactly those
 * the document says are invalid. A client generated from the document therefore sends nothing the server refuses
 * for its form, and the server accepts everything the document allows. The document's response schemas are held
 * to the same: each {@code required} property is in a real answer.
 */
class OpenApiConstraintsTest {

    /** Characters a mutation puts in: ones some constraint is about, and ones none is. */
    private static final String PALETTE = " {}#xX9-é\u00a0\t";
    static final String TOKEN = ApiTokens.generate(new SecureRandom());
    static TestServe serve;
    static JsonNode doc;
    /** A run that exists, so that a run-id route answers with what it does for a well-formed id. */
    static String run;

    @BeforeAll
    static void start() throws Exception {
        serve = TestServe.start(Map.of(Setting.API_TOKENS, new ApiToken("all", EnumSet.allOf(Scope.class),
                ApiTokens.sha256(TOKEN)).line(), Setting.READ_RATE, "0", Setting.SUBMIT_RATE, "0"));
        try (InputStream in = OpenApiConstraintsTest.class.getResourceAsStream("/dev/runbus/server/openapi.json")) {
            doc = Json.MAPPER.readTree(in);
        }
        run = TestServe.json(serve.submit("constraints", TOKEN)).get("run_id").asText();
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void everyConstrainedParameterIsRefusedByTheServerExactlyWhereTheDocumentSays() throws Exception {
        List<String> mismatches = new ArrayList<>();
        int checked = 0;
        for (Iterator<Map.Entry<String, JsonNode>> paths = doc.get("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> path = paths.next();
            for (Iterator<Map.Entry<String, JsonNode>> ops = path.getValue().fields(); ops.hasNext(); ) {
                Map.Entry<String, JsonNode> op = ops.next();
                String method = op.getKey().toUpperCase(Locale.ROOT);
                for (JsonNode p : op.getValue().path("parameters")) {
                    JsonNode schema = resolve(p.get("schema"));
                    // A cursor is opaque: only what a listing handed out is one (CursorTest checks its form).
                    if (!Constraint.constrains(schema) || p.get("name").asText().equals("cursor")) {
                        continue;
                    }
                    assertThat(p.has("example")).as(method + " " + path.getKey() + " parameter " + p.get("name").asText()
                            + " has constraints and so an example").isTrue();
                    Constraint c = new Constraint(schema);
                    String in = p.get("in").asText();
                    for (String value : candidates(c, p.get("example").asText(), !in.equals("query"))) {
                        checked++;
                        boolean valid = c.accepts(value);
                        HttpResponse<String> r;
                        try {
                            r = send(method, path.getKey(), op.getValue(), p, value);
                        } catch (IllegalArgumentException clientCannotSendIt) {
                            continue; // a header value outside visible ASCII: no HTTP client sends it as text
                        }
                        boolean refusedForIt = r.statusCode() == 400
                                && fieldOf(r).equals(fieldName(p.get("name").asText()));
                        if (refusedForIt == valid || r.statusCode() >= 500) {
                            mismatches.add(method + " " + path.getKey() + " " + in + " " + p.get("name").asText()
                                    + "=" + printable(value) + ": the document says " + (valid ? "valid" : "invalid")
                                    + ", the server answered " + r.statusCode() + " " + r.body());
                        }
                    }
                }
            }
        }
        assertThat(checked).as("values checked").isGreaterThan(100);
        assertThat(mismatches).as("where the document and the server disagree").isEmpty();
    }

    @Test
    void everyConstrainedBodyFieldIsRefusedByTheServerExactlyWhereTheDocumentSays() throws Exception {
        JsonNode newRun = doc.at("/components/schemas/NewRun/properties");
        List<String> mismatches = new ArrayList<>();
        int checked = 0;
        for (String field : List.of("session_id", "user_id", "idempotency_key", "flow_key")) {
            JsonNode schema = newRun.get(field);
            assertThat(Constraint.constrains(schema)).as(field + " is constrained").isTrue();
            Constraint c = new Constraint(schema);
            for (String value : candidates(c, schema.get("example").asText(), false)) {
                checked++;
                Map<String, Object> body = new java.util.LinkedHashMap<>(Map.of("session_id", "s", "user_id", "u",
                        "input", "x"));
                body.put(field, value);
                HttpResponse<String> r = serve.send(serve.request("/v1/runs").header("Authorization", "Bearer " + TOKEN)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(Json.MAPPER.writeValueAsString(body))));
                boolean refusedForIt = r.statusCode() == 400 && fieldOf(r).equals(field);
                if (refusedForIt == c.accepts(value) || r.statusCode() >= 500) {
                    mismatches.add(field + "=" + printable(value) + ": the document says "
                            + (c.accepts(value) ? "valid" : "invalid") + ", the server answered " + r.statusCode()
                            + " " + r.body());
                }
            }
        }
        assertThat(checked).isGreaterThan(30);
        assertThat(mismatches).as("where the document and the server disagree").isEmpty();
    }

    @Test
    void everyRequiredPropertyOfAResponseSchemaIsInARealAnswer() throws Exception {
        Map<String, String> answers = new java.util.LinkedHashMap<>();
        answers.put("RunWithReplies", serve.get("/v1/runs/" + run, TOKEN).body());
        answers.put("RunPage", serve.get("/v1/runs", TOKEN).body());
        answers.put("DeadLetterPage", serve.get("/v1/dead-letters", TOKEN).body());
        answers.put("ScheduledPage", serve.get("/v1/scheduled", TOKEN).body());
        answers.put("StreamPage", serve.get("/v1/streams", TOKEN).body());
        answers.put("Health", serve.get("/health", null).body());
        answers.put("SubmitResult", serve.submit("required fields", TOKEN).body());
        for (Map.Entry<String, String> a : answers.entrySet()) {
            JsonNode schema = doc.at("/components/schemas/" + a.getKey());
            assertThat(schema.isMissingNode()).as("schema " + a.getKey()).isFalse();
            Set<String> required = required(schema);
            assertThat(required).as(a.getKey() + " says what is required").isNotEmpty();
            JsonNode body = Json.MAPPER.readTree(a.getValue());
            for (String name : required) {
                assertThat(body.has(name)).as(a.getKey() + "." + name + " in " + a.getValue()).isTrue();
            }
        }
        // Each run of a page has what a Run requires.
        JsonNode page = Json.MAPPER.readTree(answers.get("RunPage"));
        assertThat(page.get("runs")).isNotEmpty();
        for (String name : required(doc.at("/components/schemas/Run"))) {
            assertThat(page.get("runs").get(0).has(name)).as("Run." + name).isTrue();
        }
    }

    /** The required properties of a schema, through {@code allOf} and {@code $ref}. */
    private static Set<String> required(JsonNode schema) {
        Set<String> out = new LinkedHashSet<>();
        schema = resolve(schema);
        schema.path("required").forEach(n -> out.add(n.asText()));
        for (JsonNode part : schema.path("allOf")) {
            out.addAll(required(part));
        }
        return out;
    }

    private static JsonNode resolve(JsonNode schema) {
        while (schema != null && schema.has("$ref")) {
            schema = doc.at(schema.get("$ref").asText().substring(1));
        }
        return schema;
    }

    /**
     * The example, each of its characters replaced by each of the palette's (on both sides of a pattern), with a
     * character more and one less, and the length bounds and numeric bounds with one past each.
     *
     * @param inUrlPathOrHeader no control characters, which a path or a header cannot carry as text
     */
    private static Set<String> candidates(Constraint c, String example, boolean inUrlPathOrHeader) {
        Set<String> out = new LinkedHashSet<>();
        out.add(example);
        for (int i = 0; i < example.length(); i++) {
            for (char ch : PALETTE.toCharArray()) {
                if (inUrlPathOrHeader && Character.isISOControl(ch)) {
                    continue;
                }
                out.add(example.substring(0, i) + ch + example.substring(i + 1));
            }
        }
        out.add(example + example.charAt(example.length() - 1));
        out.add(example.substring(0, example.length() - 1));
        if (!inUrlPathOrHeader) {
            out.add(example + '\u0000');
        }
        if (c.maxLength != null) {
            String filler = example.isEmpty() ? "a" : example.substring(0, 1);
            out.add(filler.repeat(c.maxLength));
            out.add(filler.repeat(c.maxLength + 1));
        }
        for (BigDecimal bound : new BigDecimal[] {c.minimum, c.maximum}) {
            if (bound != null) {
                out.add(bound.toPlainString());
                out.add(bound.subtract(BigDecimal.ONE).toPlainString());
                out.add(bound.add(BigDecimal.ONE).toPlainString());
            }
        }
        if (c.enumeration != null) {
            out.addAll(c.enumeration);
        }
        out.remove("");
        return out;
    }

    private static HttpResponse<String> send(String method, String path, JsonNode op, JsonNode param, String value)
            throws Exception {
        String url = path;
        List<String> query = new ArrayList<>();
        List<String[]> headers = new ArrayList<>();
        for (JsonNode p : op.path("parameters")) {
            boolean it = p == param;
            if (!it && !p.path("required").asBoolean()) {
                continue;
            }
            String v = it ? value : p.has("example") ? p.get("example").asText()
                    : p.get("name").asText().equals("id") ? run : "x";
            switch (p.get("in").asText()) {
                case "path" -> url = url.replace("{" + p.get("name").asText() + "}",
                        URLEncoder.encode(v, StandardCharsets.UTF_8).replace("+", "%20"));
                case "query" -> query.add(p.get("name").asText() + "=" + URLEncoder.encode(v, StandardCharsets.UTF_8));
                case "header" -> headers.add(new String[] {p.get("name").asText(), v});
                default -> throw new IllegalStateException("parameter in " + p.get("in"));
            }
        }
        if (!query.isEmpty()) {
            url += "?" + String.join("&", query);
        }
        HttpRequest.Builder b = serve.request(url).header("Authorization", "Bearer " + TOKEN);
        headers.forEach(h -> b.header(h[0], h[1]));
        if (method.equals("POST")) {
            b.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                    path.equals("/v1/runs") ? HttpApiTest.runBody("constraints") : "{}"));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return serve.send(b);
    }

    /** The field a 400 names: a header's, as the body field it stands for. */
    private static String fieldName(String parameter) {
        return parameter.equals("Idempotency-Key") ? "idempotency_key" : parameter;
    }

    private static String fieldOf(HttpResponse<String> r) throws Exception {
        JsonNode field = Json.MAPPER.readTree(r.body()).get("field");
        return field == null || field.isNull() ? "" : field.asText();
    }

    private static String printable(String s) {
        StringBuilder out = new StringBuilder("\"");
        s.codePoints().forEach(c -> out.append(c < 0x20 || c == 0x7f || c == 0xa0 ? String.format("\\u%04x", c)
                : Character.toString(c)));
        return out.append('"').toString();
    }

    /** What a JSON schema of a string or integer allows, read as a generated client would. */
    static final class Constraint {
        final Pattern pattern;
        final Integer minLength;
        final Integer maxLength;
        final BigDecimal minimum;
        final BigDecimal maximum;
        final boolean integer;
        final Set<String> enumeration;

        Constraint(JsonNode s) {
            pattern = s.has("pattern") ? Pattern.compile(s.get("pattern").asText()) : null;
            minLength = s.has("minLength") ? s.get("minLength").asInt() : null;
            maxLength = s.has("maxLength") ? s.get("maxLength").asInt() : null;
            minimum = s.has("minimum") ? s.get("minimum").decimalValue() : null;
            maximum = s.has("maximum") ? s.get("maximum").decimalValue() : null;
            integer = "integer".equals(s.path("type").asText());
            if (s.has("enum")) {
                Set<String> e = new LinkedHashSet<>();
                s.get("enum").forEach(n -> e.add(n.asText()));
                enumeration = e;
            } else {
                enumeration = null;
            }
        }

        static boolean constrains(JsonNode s) {
            return s != null && (s.has("pattern") || s.has("maxLength") || s.has("minimum") || s.has("maximum")
                    || s.has("enum"));
        }

        boolean accepts(String v) {
            if (integer) {
                if (!v.matches("-?\\d+")) {
                    return false;
                }
                BigDecimal n = new BigDecimal(v);
                return (minimum == null || n.compareTo(minimum) >= 0) && (maximum == null || n.compareTo(maximum) <= 0);
            }
            int length = v.codePointCount(0, v.length());
            return (pattern == null || pattern.matcher(v).find()) && (minLength == null || length >= minLength)
                    && (maxLength == null || length <= maxLength) && (enumeration == null || enumeration.contains(v));
        }
    }
}
