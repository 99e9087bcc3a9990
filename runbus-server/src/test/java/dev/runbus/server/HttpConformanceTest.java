package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What RFC 9110 asks of a server and the API's docs promise of every response, on a real serve: {@code HEAD} where
 * {@code GET} is served (through the same access layer), {@code Allow} on every 405, and a request id on the
 * errors Jetty answers before a request reaches a route (414, 431, a malformed request).
 */
class HttpConformanceTest {

    static final String TOKEN = ApiTokens.generate(new SecureRandom());
    static TestServe serve;

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of(Setting.API_TOKENS, new ApiToken("operator", Set.of(Scope.SUBMIT, Scope.READ),
                ApiTokens.sha256(TOKEN)).line(), Setting.MAX_HEADER_SIZE, "2048"));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void headIsAnsweredWhereGetIsAndChecksTheSameScope() throws Exception {
        RawHttp health = raw("HEAD", "/health");
        assertThat(health.status()).isEqualTo(200);
        assertThat(health.body()).isEmpty();
        assertThat(health.header("Content-Type")).startsWith("application/json");

        assertThat(raw("HEAD", "/v1/runs").status()).as("without a token").isEqualTo(401);
        RawHttp runs = raw("HEAD", "/v1/runs", "Authorization: Bearer " + TOKEN);
        assertThat(runs.status()).isEqualTo(200);
        assertThat(runs.body()).isEmpty();
        assertThat(runs.header("X-Request-Id")).matches("[0-9a-f]{16}");

        assertThat(raw("HEAD", "/v1/runs/" + UUID.randomUUID() + "/events", "Authorization: Bearer " + TOKEN)
                .status()).isEqualTo(404);
        String run = TestServe.json(serve.submit("head", TOKEN)).get("run_id").asText();
        RawHttp events = raw("HEAD", "/v1/runs/" + run + "/events", "Authorization: Bearer " + TOKEN);
        assertThat(events.status()).isEqualTo(200);
        assertThat(events.header("Content-Type")).startsWith("text/event-stream");
        assertThat(events.body()).isEmpty();
        // A page: its HEAD sends to the sign-in as its GET does.
        assertThat(raw("HEAD", "/runs").status()).isEqualTo(303);
    }

    @Test
    void every405SaysWhichMethodsThePathTakes() throws Exception {
        RawHttp health = raw("POST", "/health");
        assertThat(health.status()).isEqualTo(405);
        assertThat(health.header("Allow")).isEqualTo("GET, HEAD");
        assertThat(health.json().get("request_id").asText()).isEqualTo(health.header("X-Request-Id"));

        RawHttp runs = raw("DELETE", "/v1/runs", "Authorization: Bearer " + TOKEN);
        assertThat(runs.status()).isEqualTo(405);
        assertThat(runs.header("Allow")).isEqualTo("GET, HEAD, POST");
    }

    @Test
    void errorsJettyAnswersCarryARequestId() throws Exception {
        for (String request : new String[] {
            "GET /v1/runs?x=" + "a".repeat(4096) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + "b".repeat(4096) + "\r\n\r\n",
            "GET /health HTTP/9.9 extra\r\nHost: 127.0.0.1\r\n\r\n"}) {
            String answer = send(request);
            int status = Integer.parseInt(answer.substring(9, 12));
            assertThat(status).as(answer).isIn(400, 414, 431, 505);
            String id = answer.replaceAll("(?s).*\r\n[Xx]-[Rr]equest-[Ii]d: ([0-9a-f]{16})\r\n.*", "$1");
            assertThat(id).as(answer).matches("[0-9a-f]{16}");
            assertThat(answer).as(answer).contains("\"request_id\":\"" + id + "\"");
        }
    }

    private static RawHttp raw(String method, String path, String... headers) throws Exception {
        return RawHttp.send(serve.server.port(), null, method, path, headers);
    }

    /** Bytes as given, and whatever comes back until the server closes. */
    private static String send(String request) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", serve.server.port()), 5_000);
            s.setSoTimeout(20_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            s.getInputStream().transferTo(all);
            return all.toString(StandardCharsets.UTF_8);
        }
    }
}
