package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.RunbusException;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Redis out of reach behind a proxy that holds its traffic: the API answers 503 with a fixed message and a
 * request id (the details go to the log); and a replay Redis refuses (out of memory) changes nothing, so that it
 * can simply be repeated. On a Redis of its own, since the test makes it refuse writes.
 */
class HttpOutageTest {

    static RedisServerProcess redisServer;
    static TcpProxy redis;
    static TestServe serve;
    static io.lettuce.core.RedisClient client;
    static io.lettuce.core.api.sync.RedisCommands<String, String> admin;

    @BeforeAll
    static void start() {
        redisServer = RedisServerProcess.start();
        client = io.lettuce.core.RedisClient.create(redisServer.uri());
        admin = client.connect().sync();
        redis = TcpProxy.start("127.0.0.1", redisServer.port());
        serve = TestServe.start(Map.of(Setting.REDIS_URL, redis.uri(), Setting.MAX_DELIVERIES, "2",
                Setting.RETRY, "fixed:100ms", Setting.REDIS_TIMEOUT, "1s")); // a paused Redis fails a request in 1 s
    }

    @AfterAll
    static void stop() {
        redis.resume();
        serve.close();
        redis.close();
        client.shutdown();
        redisServer.close();
    }

    @Test
    void redisOutOfReachAnswers503WithoutInternalsAndAReplayIsAllOrNothing() throws Exception {
        String runId = TestServe.json(serve.submit("this is poison", null)).get("run_id").asText();
        JsonNode failed = Wait.until("the poison run fails", Duration.ofSeconds(30),
                () -> run(runId), r -> r.get("status").asText().equals("failed") && !r.get("dead_letter_id").isNull());
        String deadLetter = failed.get("dead_letter_id").asText();

        redis.pause();
        try {
            HttpResponse<String> listing = serve.get("/v1/dead-letters", null);
            assertThat(listing.statusCode()).isEqualTo(503);
            assertThat(listing.headers().firstValue("Retry-After")).hasValue("1");
            JsonNode body = TestServe.json(listing);
            assertThat(body.get("error").asText()).isEqualTo("Redis is unavailable: try again");
            assertThat(body.get("request_id").asText()).isEqualTo(listing.headers().firstValue("X-Request-Id").get());
            assertThat(listing.body()).doesNotContain("127.0.0.1").doesNotContain(Integer.toString(redis.port()));

            HttpResponse<String> health = serve.get("/health", null);
            assertThat(health.statusCode()).isEqualTo(503);
            assertThat(TestServe.json(health).get("redis").asText()).isEqualTo("down");
            assertThat(TestServe.json(health).get("postgres").asText()).isEqualTo("ok");
            assertThat(health.body()).doesNotContain("127.0.0.1").doesNotContain("Exception");
        } finally {
            redis.resume();
        }

        // Redis out of memory: reads work, writes are refused. The replay's PostgreSQL step runs first; its Redis
        // step is refused, and the transaction that made the run pending is rolled back: nothing changed.
        admin.configSet("maxmemory", "1");
        HttpResponse<String> refused;
        try {
            refused = serve.send(serve.request("/v1/dead-letters/" + deadLetter + "/replay")
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.noBody()));
        } finally {
            admin.configSet("maxmemory", "0");
        }
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(TestServe.json(refused).get("error").asText()).isEqualTo("Redis is unavailable: try again");
        JsonNode after = run(runId);
        assertThat(after.get("status").asText()).as("the run after a replay Redis refused").isEqualTo("failed");
        assertThat(after.get("dead_letter_id").asText()).isEqualTo(deadLetter);
        assertThat(after.get("attempts").asInt()).isEqualTo(2);
        JsonNode letter = TestServe.json(serve.get("/v1/dead-letters", null)).get("dead_letters").get(0);
        assertThat(letter.get("id").asText()).isEqualTo(deadLetter);
        assertThat(letter.get("replayed_as").isNull()).isTrue();
        HttpResponse<String> replay = serve.send(serve.request("/v1/dead-letters/" + deadLetter + "/replay")
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(replay.statusCode()).isEqualTo(202);
        Wait.until("the replayed run fails again (poison), having run again", Duration.ofSeconds(30),
                () -> run(runId), r -> r.get("status").asText().equals("failed") && r.get("attempts").asInt() > 2);
    }

    private static JsonNode run(String id) {
        try {
            return TestServe.json(serve.get("/v1/runs/" + id, null));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
