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
 * {@code POST /v1/runs} with {@code delay} or {@code run_at} on a real serve: the run waits pending with its due
 * time and its trigger in the delay set, a cancel takes the trigger out, a past {@code run_at} runs at once, and
 * malformed, doubled or too distant times answer 400 naming the field.
 */
class HttpDelayedRunTest {

    static TestServe serve;
    static String token = ApiTokens.generate(new SecureRandom());

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of(Setting.API_TOKENS, new ApiToken("all",
                Set.of(Scope.SUBMIT, Scope.READ, Scope.ADMIN), ApiTokens.sha256(token)).line()));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void aDelayedRunWaitsWithItsDueTime_andCancelTakesItsTriggerOut() throws Exception {
        HttpResponse<String> created = submit("\"delay\": \"PT1H\"");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        String id = TestServe.json(created).get("run_id").asText();
        JsonNode run = TestServe.json(serve.get("/v1/runs/" + id, token));
        assertThat(run.get("status").asText()).isEqualTo("pending");
        assertThat(Duration.between(Instant.parse(run.get("created_at").asText()),
                Instant.parse(run.get("next_attempt_at").asText()))).isEqualTo(Duration.ofHours(1));
        assertThat(TestServe.json(serve.get("/v1/scheduled", token)).get("count").asLong()).isEqualTo(1);

        HttpResponse<String> cancelled = serve.send(serve.request("/v1/runs/" + id + "/cancel")
                .header("Authorization", "Bearer " + token).POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(cancelled.statusCode()).as(cancelled.body()).isEqualTo(200);
        assertThat(TestServe.json(serve.get("/v1/scheduled", token)).get("count").asLong()).isZero();
    }

    @Test
    void aRunAtInThePastRunsAtOnce() throws Exception {
        HttpResponse<String> created = submit("\"run_at\": \"2020-01-01T00:00:00Z\"");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        String id = TestServe.json(created).get("run_id").asText();
        Wait.until("done", Duration.ofSeconds(30), () -> status(id).equals("done"));
    }

    @Test
    void badTimesAnswer400NamingTheField() throws Exception {
        long rows = serve.runRows();
        assertBad("\"delay\": \"PT1M\", \"run_at\": \"2030-01-01T00:00:00Z\"", "run_at");
        assertBad("\"delay\": \"10 minutes\"", "delay");
        assertBad("\"delay\": 600", "delay");
        assertBad("\"delay\": \"-PT1M\"", "delay");
        assertBad("\"delay\": \"P31D\"", "delay");
        assertBad("\"run_at\": \"2030-01-01T00:00:00\"", "run_at");
        assertBad("\"run_at\": \"" + Instant.now().plus(Duration.ofDays(31)) + "\"", "run_at");
        assertThat(serve.runRows()).isEqualTo(rows);
    }

    private static String status(String id) {
        try {
            return TestServe.json(serve.get("/v1/runs/" + id, token)).get("status").asText();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void assertBad(String fields, String field) throws Exception {
        HttpResponse<String> r = submit(fields);
        assertThat(r.statusCode()).as(fields + ": " + r.body()).isEqualTo(400);
        assertThat(TestServe.json(r).get("field").asText()).as(fields).isEqualTo(field);
    }

    private static HttpResponse<String> submit(String fields) throws Exception {
        String body = "{\"session_id\": \"s\", \"user_id\": \"u\", \"input\": \"hello " + System.nanoTime() + "\", "
                + fields + "}";
        return serve.send(serve.request("/v1/runs").header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)));
    }
}
