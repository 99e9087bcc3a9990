package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every status code of the HTTP API, with a real HTTP client against a real serve on real servers. */
class HttpApiTest {

    static final Duration WAIT = Duration.ofSeconds(30);
    static TestServe serve;
    static RunbusServer server;
    static String schema;
    static String prefix;
    static HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        // min-idle 1 s (TestServe's): short enough that a poison run uses up its three deliveries in a few seconds,
        // long enough that a stall of a few hundred milliseconds does not hand a live run to the reclaimer
        // (runStatusRepliesAndEvents asserts a single attempt).
        serve = TestServe.start(Map.of(Setting.MAX_BODY, "1024"));
        server = serve.server;
        schema = serve.schema;
        prefix = serve.prefix;
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    static HttpResponse<String> post(String path, String contentType, String body, String key) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        if (key != null) {
            b.header("Idempotency-Key", key);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode json(HttpResponse<String> r) throws Exception {
        return Json.MAPPER.readTree(r.body());
    }

    static String runBody(String input) {
        return "{\"session_id\":\"s1\",\"user_id\":\"u1\",\"input\":" + Json.write(input) + "}";
    }

    @Test
    void submitCreatesThenFindsThenConflicts() throws Exception {
        HttpResponse<String> first = post("/v1/runs", "application/json", runBody("hello"), "key-a");
        assertThat(first.statusCode()).isEqualTo(201);
        JsonNode created = json(first);
        assertThat(created.get("created").asBoolean()).isTrue();
        assertThat(created.get("status").asText()).isEqualTo("pending");

        HttpResponse<String> again = post("/v1/runs", "application/json",
                "{\"session_id\":\"s1\",\"user_id\":\"u1\",\"input\":\"hello\",\"idempotency_key\":\"key-a\"}", null);
        assertThat(again.statusCode()).isEqualTo(200);
        assertThat(json(again).get("run_id").asText()).isEqualTo(created.get("run_id").asText());
        assertThat(json(again).get("created").asBoolean()).isFalse();

        HttpResponse<String> conflict = post("/v1/runs", "application/json", runBody("another body"), "key-a");
        assertThat(conflict.statusCode()).isEqualTo(409);
        assertThat(json(conflict).get("error").asText()).contains("key-a");
    }

    /** An expiry and a timeout are stored with the run; a malformed, out-of-range or too-early one is a 400 naming it. */
    @Test
    void aRunsExpiryAndTimeoutAreStoredWithIt_andBadOnesAreRefusedByName() throws Exception {
        HttpResponse<String> r = post("/v1/runs", "application/json",
                "{\"session_id\":\"s1\",\"user_id\":\"u1\",\"input\":\"bounded\",\"expire_after\":\"PT5M\","
                        + "\"timeout\":\"PT1M\"}", null);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        String id = json(r).get("run_id").asText();
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(dev.runbus.testkit.TestServers.databaseUrl());
             java.sql.ResultSet rs = c.createStatement().executeQuery("SELECT extract(epoch FROM expires_at - created_at),"
                     + " timeout_ms FROM " + schema + ".runs WHERE id = '" + id + "'")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getDouble(1)).isEqualTo(300.0);
            assertThat(rs.getLong(2)).isEqualTo(60_000L);
        }
        com.fasterxml.jackson.databind.JsonNode run = json(get("/v1/runs/" + id));
        assertThat(java.time.Duration.between(java.time.Instant.parse(run.get("created_at").asText()),
                java.time.Instant.parse(run.get("expires_at").asText()))).isEqualTo(java.time.Duration.ofMinutes(5));
        assertThat(run.get("timeout").asText()).isEqualTo("PT1M");
        for (String[] bad : List.of(new String[] {"expire_after", "\"5 minutes\""},
                new String[] {"expire_after", "\"PT0S\""}, new String[] {"timeout", "300"},
                new String[] {"timeout", "\"P31D\""}, new String[] {"expire_after", "\"PT1M\",\"delay\":\"PT2M\""})) {
            HttpResponse<String> refused = post("/v1/runs", "application/json",
                    "{\"session_id\":\"s1\",\"user_id\":\"u1\",\"input\":\"x\",\"" + bad[0] + "\":" + bad[1] + "}", null);
            assertThat(refused.statusCode()).as(bad[0] + " " + bad[1] + ": " + refused.body()).isEqualTo(400);
            assertThat(json(refused).get("field").asText()).isEqualTo(bad[0]);
        }
    }

    /**
     * A flow key, a priority and a flow sub-key are stored with the run; this server's worker sets no flow control, so
     * the run runs as it comes.
     */
    @Test
    void aRunWithAFlowKeyIsStoredWithIt() throws Exception {
        HttpResponse<String> r = post("/v1/runs", "application/json",
                "{\"session_id\":\"s1\",\"user_id\":\"u1\",\"input\":\"tenant work\",\"flow_key\":\"tenant-7\","
                        + "\"priority\":9,\"flow_sub_key\":\"conversation-3\"}", null);
        assertThat(r.statusCode()).isEqualTo(201);
        String id = json(r).get("run_id").asText();
        Wait.until("done", WAIT, () -> {
            try {
                return json(get("/v1/runs/" + id));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, run -> run.get("status").asText().equals("done"));
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(dev.runbus.testkit.TestServers.databaseUrl());
             java.sql.ResultSet rs = c.createStatement().executeQuery("SELECT flow_key, priority, flow_sub_key FROM "
                     + schema + ".runs WHERE id = '" + id + "'")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("tenant-7");
            assertThat(rs.getInt(2)).isEqualTo(9);
            assertThat(rs.getString(3)).isEqualTo("conversation-3");
        }
        com.fasterxml.jackson.databind.JsonNode run = json(get("/v1/runs/" + id));
        assertThat(run.has("progress")).as("progress, null when its handler reported none").isTrue();
        assertThat(run.get("progress").isNull()).isTrue();
        for (String priority : List.of("10", "-1", "4.5", "\"9\"", "true")) {
            HttpResponse<String> refused = post("/v1/runs", "application/json",
                    "{\"session_id\":\"s1\",\"user_id\":\"u1\",\"input\":\"x\",\"flow_key\":\"t\",\"priority\":"
                            + priority + "}", null);
            assertThat(refused.statusCode()).as("priority " + priority).isEqualTo(400);
            assertThat(json(refused).get("field").asText()).isEqualTo("priority");
        }
        HttpResponse<String> withoutFlowKey = post("/v1/runs", "application/json",
                "{\"session_id\":\"s1\",\"user_id\":\"u1\",\"input\":\"x\",\"priority\":9}", null);
        assertThat(withoutFlowKey.statusCode()).isEqualTo(400);
        assertThat(json(withoutFlowKey).get("field").asText()).isEqualTo("priority");
        for (String subKey : List.of("7", "\"\"", "\"a\\u0000b\"", "\"" + "c".repeat(257) + "\"")) {
            HttpResponse<String> refused = post("/v1/runs", "application/json",
                    "{\"session_id\":\"s1\",\"user_id\":\"u1\",\"input\":\"x\",\"flow_key\":\"t\","
                            + "\"flow_sub_key\":" + subKey + "}", null);
            assertThat(refused.statusCode()).as("flow_sub_key " + subKey).isEqualTo(400);
            assertThat(json(refused).get("field").asText()).isEqualTo("flow_sub_key");
        }
        HttpResponse<String> subKeyWithoutFlowKey = post("/v1/runs", "application/json",
                "{\"session_id\":\"s1\",\"user_id\":\"u1\",\"input\":\"x\",\"flow_sub_key\":\"c\"}", null);
        assertThat(subKeyWithoutFlowKey.statusCode()).isEqualTo(400);
        assertThat(json(subKeyWithoutFlowKey).get("field").asText()).isEqualTo("flow_sub_key");
        HttpResponse<String> bad = post("/v1/runs", "application/json",
                "{\"session_id\":\"s1\",\"user_id\":\"u1\",\"input\":\"x\",\"flow_key\":7}", null);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(json(bad).get("field").asText()).isEqualTo("flow_key");
    }

    static HttpResponse<String> send(String method, String path, String contentType, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A flow key's override is stored, set in Redis and listed; cleared, it is gone from both; bad ones are 4xx. */
    @Test
    void aFlowOverrideIsSetListedAndCleared() throws Exception {
        String caps = prefix + ":{runs}:flow:caps";
        HttpResponse<String> set = send("PUT", "/v1/flow/overrides/tenant-7", "application/json",
                "{\"cap\":3,\"rate\":{\"permits\":50,\"per\":\"PT1S\",\"burst\":5},\"weight\":2}");
        assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
        assertThat(json(set).get("rate").get("burst").asInt()).isEqualTo(5);
        assertThat(RedisTarget.local().redis().hget(caps, "tenant-7")).isEqualTo("3");
        JsonNode listed = json(get("/v1/flow/overrides"));
        assertThat(listed.get("overrides")).hasSize(1);
        assertThat(listed.get("overrides").get(0).get("flow_key").asText()).isEqualTo("tenant-7");
        assertThat(listed.get("overrides").get(0).get("weight").asDouble()).isEqualTo(2.0);
        assertThat(listed.get("next_after").isNull()).as("a short page").isTrue();
        for (String key : java.util.List.of("tenant-8", "tenant-9")) {
            assertThat(send("PUT", "/v1/flow/overrides/" + key, "application/json", "{\"cap\":1}").statusCode())
                    .isEqualTo(200);
        }
        JsonNode first = json(get("/v1/flow/overrides?limit=2"));
        assertThat(first.get("overrides")).hasSize(2);
        assertThat(first.get("next_after").asText()).isEqualTo("tenant-8");
        JsonNode rest = json(get("/v1/flow/overrides?after=tenant-8&limit=2"));
        assertThat(rest.get("overrides").get(0).get("flow_key").asText()).isEqualTo("tenant-9");
        assertThat(rest.get("next_after").isNull()).isTrue();
        assertThat(json(get("/v1/flow/overrides?after=")).get("field").asText()).isEqualTo("after");
        for (String key : java.util.List.of("tenant-8", "tenant-9")) {
            assertThat(send("DELETE", "/v1/flow/overrides/" + key, null, null).statusCode()).isEqualTo(204);
        }

        Map<String, String> refused = Map.of("{\"cap\":-1}", "cap", "{\"rate\":{\"permits\":0}}", "rate",
                "{\"rate\":{\"permits\":1,\"per\":\"soon\"}}", "rate", "{\"weight\":\"heavy\"}", "weight",
                "{\"weight\":0}", "weight");
        for (Map.Entry<String, String> bad : refused.entrySet()) {
            HttpResponse<String> r = send("PUT", "/v1/flow/overrides/tenant-7", "application/json", bad.getKey());
            assertThat(r.statusCode()).as(bad.getKey()).isEqualTo(400);
            assertThat(json(r).get("field").asText()).as(bad.getKey()).isEqualTo(bad.getValue());
        }
        assertThat(send("PUT", "/v1/flow/overrides/a%00b", "application/json", "{}").statusCode()).isEqualTo(400);
        assertThat(send("PUT", "/v1/flow/overrides/tenant-7", "text/plain", "{}").statusCode()).isEqualTo(415);
        assertThat(send("PUT", "/v1/flow/overrides/tenant-7", "application/json", "[1]").statusCode())
                .isEqualTo(400);
        assertThat(RedisTarget.local().redis().hget(caps, "tenant-7")).as("unchanged by the refused ones")
                .isEqualTo("3");

        assertThat(send("DELETE", "/v1/flow/overrides/tenant-7", null, null).statusCode()).isEqualTo(204);
        assertThat(RedisTarget.local().redis().hget(caps, "tenant-7")).isNull();
        assertThat(json(get("/v1/flow/overrides")).get("overrides")).isEmpty();
    }

    @Test
    void theEchoHandlerIsWarnedAboutInTheBanner() {
        assertThat(server.handlerWarning()).startsWith("WARNING").contains("echo")
                .contains(DemoHandler.class.getName()).contains("--handler");
    }

    @Test
    void badRequestsNameWhatIsWrong() throws Exception {
        HttpResponse<String> missing = post("/v1/runs", "application/json", "{\"user_id\":\"u\",\"input\":\"x\"}", null);
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(json(missing).get("field").asText()).isEqualTo("session_id");

        HttpResponse<String> notJson = post("/v1/runs", "application/json", "{oops", null);
        assertThat(notJson.statusCode()).isEqualTo(400);
        assertThat(json(notJson).get("error").asText()).contains("not valid JSON");

        HttpResponse<String> wrongType = post("/v1/runs", "application/json",
                "{\"session_id\":\"s\",\"user_id\":7,\"input\":\"x\"}", null);
        assertThat(wrongType.statusCode()).isEqualTo(400);
        assertThat(json(wrongType).get("field").asText()).isEqualTo("user_id");

        HttpResponse<String> keys = post("/v1/runs", "application/json",
                "{\"session_id\":\"s\",\"user_id\":\"u\",\"input\":\"x\",\"idempotency_key\":\"a\"}", "b");
        assertThat(keys.statusCode()).isEqualTo(400);
        assertThat(json(keys).get("field").asText()).isEqualTo("idempotency_key");

        HttpResponse<String> tooLarge = post("/v1/runs", "application/json", runBody("x".repeat(2000)), null);
        assertThat(tooLarge.statusCode()).isEqualTo(413);

        HttpResponse<String> text = post("/v1/runs", "text/plain", runBody("x"), null);
        assertThat(text.statusCode()).isEqualTo(415);
        assertThat(json(text).get("error").asText()).contains("application/json");

        assertThat(get("/v1/runs/not-a-uuid").statusCode()).isEqualTo(400);
        HttpResponse<String> unknown = get("/v1/runs/" + UUID.randomUUID());
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(json(unknown).get("error").asText()).contains("no run");
        assertThat(get("/v1/runs/" + UUID.randomUUID() + "/events").statusCode()).isEqualTo(404);
        assertThat(get("/v1/nothing-here").statusCode()).isEqualTo(404);
        assertThat(post("/v1/dead-letters/1-1/replay", "application/json", "", null).statusCode()).isEqualTo(404);
    }

    @Test
    void runStatusRepliesAndEvents() throws Exception {
        String id = json(post("/v1/runs", "application/json", runBody("what time is it"), null)).get("run_id").asText();
        HttpResponse<String> events = get("/v1/runs/" + id + "/events");
        assertThat(events.statusCode()).isEqualTo(200);
        assertThat(events.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
        assertThat(events.body()).contains("event: status").contains("\"status\":\"done\"")
                .contains("event: reply").contains("You said: what time is it").contains("event: end");
        JsonNode run = json(get("/v1/runs/" + id));
        assertThat(run.get("status").asText()).isEqualTo("done");
        assertThat(run.get("attempts").asInt()).isEqualTo(1);
        assertThat(run.get("replies")).hasSize(2);
        assertThat(run.get("replies").get(0).get("seq").asInt()).isEqualTo(1);
    }

    /**
     * A flaky run's first attempt fails: until its retry starts, next_attempt_at is due by the default runs retry
     * policy, about 1 s (less up to 20% jitter) after the failure was recorded, in the HTTP JSON and in
     * {@code runbus runs show}; null once the run is done.
     */
    @Test
    void nextAttemptAtAfterAFailedAttempt_thenNullWhenDone() throws Exception {
        String id = json(post("/v1/runs", "application/json", runBody("a flaky one"), null)).get("run_id").asText();

        JsonNode failed = Wait.until("first attempt failed", WAIT, () -> {
            try {
                return json(get("/v1/runs/" + id));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, r -> !r.get("next_attempt_at").isNull());

        assertThat(failed.get("error").asText()).contains("upstream timed out");
        Duration due = Duration.between(Instant.parse(failed.get("updated_at").asText()),
                Instant.parse(failed.get("next_attempt_at").asText()));
        assertThat(due).isBetween(Duration.ofMillis(800), Duration.ofSeconds(1));
        JsonNode done = Wait.until("done", WAIT, () -> {
            try {
                return json(get("/v1/runs/" + id));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, r -> r.get("status").asText().equals("done"));
        assertThat(done.get("attempts").asInt()).isEqualTo(2);
        assertThat(done.has("next_attempt_at")).isTrue();
        assertThat(done.get("next_attempt_at").isNull()).isTrue();

        Cli show = Cli.run("runs", "show", id, "--json", "--redis-url", RedisTarget.local().uri(), "--database-url",
                DemoEndToEndTest.DATABASE, "--schema", schema, "--key-prefix", prefix);
        assertThat(show.exitCode).as(show.err).isZero();
        JsonNode shown = Json.MAPPER.readTree(show.out);
        assertThat(shown.get("run_id").asText()).isEqualTo(id);
        assertThat(shown.get("status").asText()).isEqualTo("done");
        assertThat(shown.get("next_attempt_at").isNull()).isTrue();
        assertThat(shown.get("replies")).hasSize(2);
        Cli table = Cli.run("runs", "show", id, "--redis-url", RedisTarget.local().uri(), "--database-url",
                DemoEndToEndTest.DATABASE, "--schema", schema, "--key-prefix", prefix);
        assertThat(table.out).contains("next_attempt_at").contains("attempts");
        Cli unknown = Cli.run("runs", "show", UUID.randomUUID().toString(), "--redis-url", RedisTarget.local().uri(),
                "--database-url", DemoEndToEndTest.DATABASE, "--schema", schema, "--key-prefix", prefix);
        assertThat(unknown.exitCode).isEqualTo(2);
        assertThat(unknown.err).contains("no run");
    }

    @Test
    void deadLettersListAndReplayOnce() throws Exception {
        String id = json(post("/v1/runs", "application/json", runBody("this is poison"), null)).get("run_id").asText();
        Wait.until("run failed", WAIT, () -> {
            try {
                return json(get("/v1/runs/" + id)).get("status").asText().equals("failed");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        JsonNode list = json(get("/v1/dead-letters"));
        JsonNode dl = null;
        for (JsonNode d : list.get("dead_letters")) {
            if (d.get("message_id").asText().equals(id)) {
                dl = d;
            }
        }
        assertThat(dl).isNotNull();
        assertThat(dl.get("reason").asText()).contains("poison");
        HttpResponse<String> replay = post("/v1/dead-letters/" + dl.get("id").asText() + "/replay", "application/json",
                "", null);
        assertThat(replay.statusCode()).isEqualTo(202);
        assertThat(json(replay).get("run_id").asText()).isEqualTo(id);
        HttpResponse<String> twice = post("/v1/dead-letters/" + dl.get("id").asText() + "/replay", "application/json",
                "", null);
        assertThat(twice.statusCode()).isEqualTo(409);
    }

    @Test
    void streamsHealthAndMetrics() throws Exception {
        post("/v1/runs", "application/json", runBody("ping"), null);
        HttpResponse<String> streams = get("/v1/streams");
        assertThat(streams.statusCode()).isEqualTo(200);
        assertThat(streams.body()).contains("\"topic\":\"runs\"").contains("\"name\":\"run-workers\"");
        HttpResponse<String> health = get("/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(json(health).get("redis").asText()).isEqualTo("ok");
        assertThat(json(health).get("postgres").asText()).isEqualTo("ok");
        // The gauges are read on their own loop, first as the worker subscribes: not necessarily before this scrape.
        HttpResponse<String> metrics = Wait.until("the gauges in /metrics", WAIT, () -> {
            try {
                return get("/metrics");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, r -> r.body().contains("runbus_dead_letter_depth{topic="));
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
        assertThat(metrics.body()).contains("# TYPE runbus_runs_submitted_total counter")
                .contains("runbus_runs{status=").contains("runbus_dead_letter_depth{topic=\"runs\"}");
    }

    /** Needs Inspector.partitions from runbus-core. */
    @Test
    void partitionsOfTheRunsTopic() throws Exception {
        post("/v1/runs", "application/json", runBody("ping"), null);
        HttpResponse<String> r = get("/v1/streams/runs/partitions");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode partitions = json(r);
        assertThat(partitions.isArray()).isTrue();
        assertThat(partitions).hasSize(1); // the API's runs topic has one partition
        JsonNode p = partitions.get(0);
        assertThat(p.get("partition").asInt()).isZero();
        assertThat(p.get("length").asLong()).isPositive();
        assertThat(p.has("owner")).isTrue();
        assertThat(p.has("pending")).isTrue();
        assertThat(p.has("lag")).isTrue();
        HttpResponse<String> otherGroup = get("/v1/streams/runs/partitions?group=nobody");
        assertThat(otherGroup.statusCode()).as(otherGroup.body()).isEqualTo(200);
    }
}
