package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import dev.runbus.testkit.Wait;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Schedules over HTTP on a real serve (docs/http-api.md, docs/schedules.md): created, replaced, read, listed, paused,
 * resumed, previewed, backfilled and deleted; bad bodies refused naming the field; writes need the admin scope; and
 * serve's own scheduler fires a schedule's runs, which its worker runs.
 */
class HttpSchedulesTest {

    static TestServe serve;
    static String admin = ApiTokens.generate(new SecureRandom());
    static String reader = ApiTokens.generate(new SecureRandom());

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of(Setting.API_TOKENS, String.join(";",
                new ApiToken("admin", Set.of(Scope.ADMIN, Scope.READ), ApiTokens.sha256(admin)).line(),
                new ApiToken("reader", Set.of(Scope.READ), ApiTokens.sha256(reader)).line())));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    private static HttpResponse<String> send(String method, String path, String body, String token) throws Exception {
        HttpRequest.Builder b = serve.request(path).header("Authorization", "Bearer " + token);
        if (body != null) {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return serve.send(b);
    }

    private static int doneTicks() {
        try {
            return TestServe.json(serve.get("/v1/runs?session=tick&status=done", reader)).get("runs").size();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static final String NIGHTLY = "{\"cron\": \"30 2 * * *\", \"zone\": \"Europe/London\", \"overlap\": \"buffer\","
            + " \"overlap_buffer\": 2, \"misfire\": \"catch_up\", \"catch_up_max\": 3, \"catch_up_window\": \"PT6H\","
            + " \"run\": {\"session_id\": \"reports\", \"user_id\": \"system\", \"input\": {\"kind\": \"nightly\"}}}";

    @Test
    void aScheduleIsCreatedReadListedPausedResumedPreviewedBackfilledAndDeleted() throws Exception {
        HttpResponse<String> created = send("PUT", "/v1/schedules/nightly", NIGHTLY, admin);
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        JsonNode view = TestServe.json(created);
        assertThat(view.get("cron").asText()).isEqualTo("30 2 * * *");
        assertThat(view.get("zone").asText()).isEqualTo("Europe/London");
        assertThat(view.get("overlap").asText()).isEqualTo("buffer");
        assertThat(view.get("overlap_buffer").asInt()).isEqualTo(2);
        assertThat(view.get("misfire").asText()).isEqualTo("catch_up");
        assertThat(view.get("catch_up_window").asText()).isEqualTo("PT6H");
        assertThat(view.get("run").get("input").asText()).isEqualTo("{\"kind\":\"nightly\"}");
        assertThat(view.get("next_fire_at").isNull()).isFalse();
        assertThat(send("PUT", "/v1/schedules/nightly", NIGHTLY.replace("30 2", "45 3"), admin).statusCode())
                .as("replaced").isEqualTo(200);
        assertThat(TestServe.json(serve.get("/v1/schedules/nightly", reader)).get("cron").asText())
                .isEqualTo("45 3 * * *");

        for (String name : new String[] {"b-second", "c-third"}) {
            assertThat(send("PUT", "/v1/schedules/" + name, "{\"every\": \"PT1H\", \"start_at\": "
                    + "\"2026-01-01T00:00:00Z\", \"run\": {\"session_id\": \"s\", \"user_id\": \"u\", \"input\": \"x\"}}",
                    admin).statusCode()).isEqualTo(201);
        }
        JsonNode first = TestServe.json(serve.get("/v1/schedules?limit=2", reader));
        assertThat(first.get("schedules")).hasSize(2);
        assertThat(first.get("next_after").asText()).isEqualTo("c-third");
        JsonNode rest = TestServe.json(serve.get("/v1/schedules?after=c-third&limit=2", reader));
        assertThat(rest.get("schedules").get(0).get("name").asText()).isEqualTo("nightly");
        assertThat(rest.get("next_after").isNull()).isTrue();

        JsonNode paused = TestServe.json(send("POST", "/v1/schedules/nightly/pause", null, admin));
        assertThat(paused.get("paused").asBoolean()).isTrue();
        assertThat(paused.get("next_fire_at").isNull()).isTrue();
        JsonNode resumed = TestServe.json(send("POST", "/v1/schedules/nightly/resume", null, admin));
        assertThat(resumed.get("paused").asBoolean()).isFalse();
        assertThat(resumed.get("next_fire_at").isNull()).isFalse();

        JsonNode preview = TestServe.json(serve.get("/v1/schedules/nightly/preview?n=3", reader));
        assertThat(preview.get("fires")).hasSize(3);
        assertThat(Instant.parse(preview.get("fires").get(1).asText()))
                .isAfter(Instant.parse(preview.get("fires").get(0).asText()));

        HttpResponse<String> backfilled = send("POST", "/v1/schedules/b-second/backfill",
                "{\"from\": \"2026-01-01T00:00:00Z\", \"to\": \"2026-01-01T04:00:00Z\"}", admin);
        assertThat(backfilled.statusCode()).as(backfilled.body()).isEqualTo(200);
        assertThat(TestServe.json(backfilled).get("made").asInt()).as("every hour, both ends").isEqualTo(5);
        assertThat(TestServe.json(send("POST", "/v1/schedules/b-second/backfill",
                "{\"from\": \"2026-01-01T00:00:00Z\", \"to\": \"2026-01-01T04:00:00Z\"}", admin)).get("made").asInt())
                .as("again: nothing new").isZero();

        for (String name : new String[] {"nightly", "b-second", "c-third"}) {
            assertThat(send("DELETE", "/v1/schedules/" + name, null, admin).statusCode()).isEqualTo(204);
        }
        assertThat(serve.get("/v1/schedules/nightly", reader).statusCode()).isEqualTo(404);
        assertThat(send("DELETE", "/v1/schedules/nightly", null, admin).statusCode()).isEqualTo(404);
        assertThat(send("POST", "/v1/schedules/nightly/pause", null, admin).statusCode()).isEqualTo(404);
        assertThat(serve.get("/v1/schedules/nightly/preview", reader).statusCode()).isEqualTo(404);
    }

    @Test
    void badSchedulesAreRefusedNamingTheField_andNothingIsStored() throws Exception {
        String run = "\"run\": {\"session_id\": \"s\", \"user_id\": \"u\", \"input\": \"x\"}";
        Map<String, String> refused = new java.util.LinkedHashMap<>();
        refused.put("{\"cron\": \"61 * * * *\", " + run + "}", "cron");
        refused.put("{" + run + "}", "cron");
        refused.put("{\"cron\": \"* * * * *\", \"every\": \"PT1M\", " + run + "}", "every");
        refused.put("{\"every\": \"PT0.1S\", " + run + "}", "every");
        refused.put("{\"every\": \"soon\", " + run + "}", "every");
        refused.put("{\"every\": \"PT1M\", \"zone\": \"Mars/Olympus\", " + run + "}", "zone");
        refused.put("{\"every\": \"PT1M\", \"overlap\": \"sometimes\", " + run + "}", "overlap");
        refused.put("{\"every\": \"PT1M\", \"overlap\": \"buffer\", \"overlap_buffer\": 0, " + run + "}",
                "overlap_buffer");
        refused.put("{\"every\": \"PT1M\", \"catch_up_max\": 3, " + run + "}", "catch_up_max");
        refused.put("{\"every\": \"PT1M\", \"misfire\": \"catch_up\", \"catch_up_max\": 5000, " + run + "}",
                "catch_up_max");
        refused.put("{\"every\": \"PT1M\", \"misfire_grace\": \"PT0S\", " + run + "}", "misfire_grace");
        refused.put("{\"every\": \"PT1M\", \"start_at\": \"2026-02-01T00:00:00Z\", \"end_at\": "
                + "\"2026-01-01T00:00:00Z\", " + run + "}", "end_at");
        refused.put("{\"every\": \"PT1M\", \"jitter\": \"P2D\", " + run + "}", "jitter");
        refused.put("{\"every\": \"PT1M\"}", "run");
        refused.put("{\"every\": \"PT1M\", \"run\": {\"user_id\": \"u\", \"input\": \"x\"}}", "run.session_id");
        refused.put("{\"every\": \"PT1M\", \"run\": {\"session_id\": \"s\", \"user_id\": \"u\", \"input\": \"x\", "
                + "\"idempotency_key\": \"k\"}}", "run.idempotency_key");
        refused.put("{\"every\": \"PT1M\", \"paused\": \"yes\", " + run + "}", "paused");
        refused.put("{\"every\": \"PT1M\", \"start_at\": \"+300000-01-01T00:00:00Z\", " + run + "}", "start_at");
        refused.put("{\"every\": \"PT1M\", \"overlap_buffer\": 2, " + run + "}", "overlap_buffer");
        for (Map.Entry<String, String> bad : refused.entrySet()) {
            HttpResponse<String> r = send("PUT", "/v1/schedules/bad", bad.getKey(), admin);
            assertThat(r.statusCode()).as(bad.getKey() + " -> " + r.body()).isEqualTo(400);
            assertThat(TestServe.json(r).get("field").asText()).as(bad.getKey()).isEqualTo(bad.getValue());
        }
        assertThat(send("PUT", "/v1/schedules/bad", "[1]", admin).statusCode()).isEqualTo(400);
        assertThat(serve.send(serve.request("/v1/schedules/bad").header("Authorization", "Bearer " + admin)
                .header("Content-Type", "text/plain").PUT(HttpRequest.BodyPublishers.ofString("{}"))).statusCode())
                .isEqualTo(415);
        HttpResponse<String> badName = send("PUT", "/v1/schedules/a%20b", "{\"every\": \"PT1M\", " + run + "}",
                admin);
        assertThat(badName.statusCode()).isEqualTo(400);
        assertThat(TestServe.json(badName).get("field").asText()).isEqualTo("name");
        assertThat(TestServe.json(serve.get("/v1/schedules", reader)).get("schedules")).as("nothing stored").isEmpty();
        assertThat(TestServe.json(serve.get("/v1/schedules/bad/preview?n=1001", reader)).get("field").asText())
                .isEqualTo("n");
    }

    @Test
    void writesNeedTheAdminScope() throws Exception {
        String body = "{\"every\": \"PT1M\", \"run\": {\"session_id\": \"s\", \"user_id\": \"u\", \"input\": \"x\"}}";
        assertThat(send("PUT", "/v1/schedules/guarded", body, reader).statusCode()).isEqualTo(403);
        assertThat(serve.get("/v1/schedules/guarded", reader).statusCode()).isEqualTo(404);
        assertThat(send("PUT", "/v1/schedules/guarded", body, admin).statusCode()).isEqualTo(201);
        assertThat(send("DELETE", "/v1/schedules/guarded", null, reader).statusCode()).isEqualTo(403);
        assertThat(send("POST", "/v1/schedules/guarded/pause", null, reader).statusCode()).isEqualTo(403);
        assertThat(send("DELETE", "/v1/schedules/guarded", null, admin).statusCode()).isEqualTo(204);
    }

    /** Serve's own scheduler fires a schedule of every second, and its worker runs each fire's run once. */
    @Test
    void serveFiresTheSchedule_andItsWorkerRunsTheRuns() throws Exception {
        assertThat(send("PUT", "/v1/schedules/every-second", "{\"every\": \"PT1S\", \"overlap\": \"allow_all\","
                + " \"run\": {\"session_id\": \"tick\", \"user_id\": \"u\", \"input\": \"tick\"}}", admin).statusCode())
                .isEqualTo(201);
        Wait.until("three fires made and run", Duration.ofSeconds(60), () -> doneTicks() >= 3);
        assertThat(send("DELETE", "/v1/schedules/every-second", null, admin).statusCode()).isEqualTo(204);
        JsonNode state = TestServe.json(serve.get("/v1/schedules", reader));
        assertThat(state.get("schedules")).isEmpty();
    }
}
