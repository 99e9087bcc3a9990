package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import dev.runbus.testkit.Wait;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The limits that keep one client from holding the server: submission rate, event streams per caller, header
 * size, slow and oversized bodies, and the checks of inputs; with a real serve on the test servers.
 */
class HttpLimitsTest {

    static final int RATE = 5;
    static final int STREAMS = 8;
    static TestServe serve;
    /** Tokens of their own per test, so that one test's submissions do not use up another's rate. */
    static String rate = ApiTokens.generate(new SecureRandom());
    static String streams = ApiTokens.generate(new SecureRandom());
    static String misc = ApiTokens.generate(new SecureRandom());
    static String admin = ApiTokens.generate(new SecureRandom());

    @BeforeAll
    static void start() {
        HoldingHandler.reset();
        String lines = String.join(";", line("rate", rate), line("streams", streams), line("misc", misc),
                new ApiToken("admin", Set.of(Scope.ADMIN), ApiTokens.sha256(admin)).line());
        serve = TestServe.start(Map.of(Setting.API_TOKENS, lines, Setting.SUBMIT_RATE, Integer.toString(RATE),
                Setting.MAX_EVENT_STREAMS, Integer.toString(STREAMS), Setting.MAX_BODY, "1024",
                Setting.REQUEST_TIMEOUT, "1s", Setting.IDLE_TIMEOUT, "2s",
                Setting.HANDLER, HoldingHandler.class.getName(), Setting.CONCURRENCY, "64"));
    }

    private static String line(String name, String token) {
        return new ApiToken(name, Set.of(Scope.SUBMIT, Scope.READ), ApiTokens.sha256(token)).line();
    }

    @AfterAll
    static void stop() {
        HoldingHandler.release();
        serve.close();
    }

    @Test
    void submissionsPastTheRateAnswer429WithRetryAfterAndWriteNothing() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        HttpResponse<String> refused = null;
        long rowsBefore = serve.runRows();
        for (int i = 0; i < RATE * 3; i++) {
            HttpResponse<String> r = serve.submit("rate " + i, rate);
            statuses.add(r.statusCode());
            if (r.statusCode() == 429 && refused == null) {
                refused = r;
            }
        }
        long created = statuses.stream().filter(s -> s == 201).count();
        assertThat(statuses).containsOnly(201, 429);
        // A burst of up to RATE, plus what refilled while the loop ran (a few at most on a slow machine).
        assertThat(created).isBetween((long) RATE, (long) RATE * 2);
        assertThat(refused).isNotNull();
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(TestServe.json(refused).get("error").asText()).contains("too many submissions");
        assertThat(serve.runRows() - rowsBefore).isEqualTo(created);
    }

    @Test
    void eventStreamsPastTheCapAnswer503AndHoldNoThreadEach() throws Exception {
        List<String> ids = new ArrayList<>();
        while (ids.size() < STREAMS) {
            Wait.until("a submission is accepted", Duration.ofSeconds(10), () -> unchecked(() -> {
                HttpResponse<String> r = serve.submit("hold " + ids.size(), streams);
                return r.statusCode() == 201 && ids.add(TestServe.json(r).get("run_id").asText());
            }));
        }
        List<CompletableFuture<HttpResponse<InputStream>>> open = new ArrayList<>();
        for (String id : ids) {
            open.add(serve.http.sendAsync(serve.request("/v1/runs/" + id + "/events")
                    .header("Authorization", "Bearer " + streams).build(), HttpResponse.BodyHandlers.ofInputStream()));
        }
        for (CompletableFuture<HttpResponse<InputStream>> s : open) {
            assertThat(s.get().statusCode()).isEqualTo(200);
        }
        HttpResponse<String> refused = serve.get("/v1/runs/" + ids.get(0) + "/events", streams);
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.headers().firstValue("Retry-After")).isPresent();
        assertThat(TestServe.json(refused).get("error").asText()).contains("too many event streams");
        // Another caller is not refused: the cap is per token.
        HttpResponse<InputStream> other = serve.http.send(serve.request("/v1/runs/" + ids.get(0) + "/events")
                .header("Authorization", "Bearer " + misc).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(other.statusCode()).isEqualTo(200);
        other.body().close();
        // Every stream is open and waiting, yet the server answers at once, and no server thread is inside
        // runbus's code: a stream waits without a thread of its own.
        assertThat(serve.get("/health", null).statusCode()).isEqualTo(200);
        assertThat(serverThreadsInRunbusCode()).isEmpty();

        HoldingHandler.release();
        for (CompletableFuture<HttpResponse<InputStream>> s : open) {
            String events = new String(s.get().body().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(events).contains("event: status").contains("event: reply").contains("event: end\ndata: {");
            assertThat(events.substring(events.indexOf("event: end"))).contains("\"status\":\"done\"");
        }
        Wait.until("the streams' places are free", Duration.ofSeconds(10),
                () -> unchecked(() -> serve.get("/v1/runs/" + ids.get(0) + "/events", streams).statusCode() == 200));
    }

    private static boolean unchecked(java.util.concurrent.Callable<Boolean> check) {
        try {
            return check.call();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Jetty's request threads whose stack passes through runbus: a thread held by a request in progress. */
    private static List<String> serverThreadsInRunbusCode() {
        List<String> out = new ArrayList<>();
        Thread.getAllStackTraces().forEach((t, stack) -> {
            if (t.getName().startsWith("JettyServerThreadPool")) {
                for (StackTraceElement e : stack) {
                    if (e.getClassName().startsWith("dev.runbus")) {
                        out.add(t.getName() + " at " + e);
                        break;
                    }
                }
            }
        });
        return out;
    }

    @Test
    void headersPastTheLimitAnswer431() throws Exception {
        HttpResponse<String> r = serve.send(serve.request("/health").header("X-Padding", "p".repeat(10_000)));
        assertThat(r.statusCode()).isEqualTo(431);
        assertThat(TestServe.json(r).get("error").asText()).isEqualTo("request headers are too large");
    }

    @Test
    void aChunkedBodyPastMaxBodyAnswers413AndWritesNothing() throws Exception {
        long rows = serve.runRows();
        long entries = serve.streamLength();
        byte[] big = HttpApiTest.runBody("x".repeat(5000)).getBytes(StandardCharsets.UTF_8);
        // An InputStream body has no length: the client sends it chunked, without Content-Length.
        HttpResponse<String> r = serve.send(serve.request("/v1/runs").header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + misc)
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(big))));
        assertThat(r.statusCode()).isEqualTo(413);
        assertThat(serve.runRows()).isEqualTo(rows);
        assertThat(serve.streamLength()).isEqualTo(entries);
        HttpResponse<String> small = serve.send(serve.request("/v1/runs").header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + misc)
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(
                        HttpApiTest.runBody("chunked").getBytes(StandardCharsets.UTF_8)))));
        assertThat(small.statusCode()).isEqualTo(201);
    }

    @Test
    void aBodyThatStopsHalfwayIsCutOffAndHoldsNothing() throws Exception {
        long rows = serve.runRows();
        String auth = "Authorization: Bearer " + misc + "\r\n";
        long started = System.nanoTime();
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", serve.server.port()));
            s.setSoTimeout(15_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + auth
                    + "Content-Length: 500\r\n\r\n{\"session_id\":").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String answer = readAll(s.getInputStream());
            long seconds = (System.nanoTime() - started) / 1_000_000_000;
            assertThat(answer).startsWith("HTTP/1.1 408");
            assertThat(seconds).as("cut off after the 1 s request timeout, well before the read timeout").isLessThan(10);
        }
        assertThat(serve.runRows()).isEqualTo(rows);
    }

    @Test
    void aConnectionThatSendsHalfItsHeadersIsClosedAfterTheIdleTimeout() throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", serve.server.port()));
            s.setSoTimeout(15_000);
            s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\nX-Half".getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            long started = System.nanoTime();
            String answer = readAll(s.getInputStream());
            assertThat(answer).doesNotContain("\"status\"");
            assertThat((System.nanoTime() - started) / 1_000_000_000).isLessThan(10);
        }
        assertThat(serve.get("/health", null).statusCode()).isEqualTo(200);
    }

    /** Everything until the server closes (a read timeout fails the test). */
    private static String readAll(InputStream in) throws Exception {
        try {
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the server kept the connection open", e);
        }
    }

    @Test
    void malformedIdsAndWrongMethodsAreTheClientsMistake() throws Exception {
        long rows = serve.runRows();
        Map<String, String> badFields = Map.of(
                "/v1/dead-letters?after=zzz", "after",
                "/v1/dead-letters?after=1-1-1", "after",
                "/v1/dead-letters?after=99999999999999999999-0", "after",
                "/v1/dead-letters?limit=-1", "limit",
                "/v1/dead-letters?topic=a%20b", "topic",
                "/v1/scheduled?topic=%7Bx%7D", "topic",
                "/v1/streams/a%23b/partitions", "topic",
                "/v1/runs/12345678-1234-1234-1234-1234567890123", "id");
        for (Map.Entry<String, String> e : badFields.entrySet()) {
            HttpResponse<String> r = serve.get(e.getKey(), misc);
            assertThat(r.statusCode()).as(e.getKey()).isEqualTo(400);
            assertThat(TestServe.json(r).get("field").asText()).as(e.getKey()).isEqualTo(e.getValue());
        }
        HttpResponse<String> last = serve.get("/v1/dead-letters?after=18446744073709551615-18446744073709551615", misc);
        assertThat(last.statusCode()).isEqualTo(200);
        assertThat(TestServe.json(last).get("dead_letters")).isEmpty();
        for (String path : List.of("/v1/dead-letters/%2e%2e%2f/replay", "/v1/dead-letters/..%2F..%2F/replay",
                "/v1/dead-letters/zzz/replay", "/v1/dead-letters/1-1%00/replay")) {
            HttpResponse<String> r = serve.send(serve.request(path).header("Authorization", "Bearer " + admin)
                    .POST(HttpRequest.BodyPublishers.noBody()));
            assertThat(r.statusCode()).as(path).isEqualTo(400);
        }
        HttpResponse<String> cancel = serve.send(serve.request("/v1/scheduled/..%2f")
                .header("Authorization", "Bearer " + admin).DELETE());
        assertThat(cancel.statusCode()).isEqualTo(400);

        HttpResponse<String> put = serve.send(serve.request("/v1/runs").PUT(HttpRequest.BodyPublishers.noBody()));
        assertThat(put.statusCode()).isEqualTo(405);
        assertThat(TestServe.json(put).get("error").asText())
                .isEqualTo("method PUT is not allowed here (allowed: GET, HEAD, POST)");
        assertThat(put.headers().firstValue("Allow")).hasValue("GET, HEAD, POST");
        assertThat(serve.send(serve.request("/v1/streams").DELETE()).statusCode()).isEqualTo(405);
        assertThat(serve.send(serve.request("/health").POST(HttpRequest.BodyPublishers.noBody())).statusCode())
                .isEqualTo(405);
        assertThat(serve.get("/v1/nothing-here", null).statusCode()).isEqualTo(404);

        HttpResponse<String> nul = serve.send(serve.request("/v1/runs").header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + misc).POST(HttpRequest.BodyPublishers.ofString("{\"session_id\":\"s\",\"user_id\":\"u\",\"input\":\"i\","
                        + "\"idempotency_key\":\"a\\u0000b\"}")));
        assertThat(nul.statusCode()).isEqualTo(400);
        JsonNode body = TestServe.json(nul);
        assertThat(body.get("field").asText()).isEqualTo("idempotency_key");
        HttpResponse<String> nulHeader = serve.send(serve.request("/v1/runs").header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + misc).header("Idempotency-Key", "a\tb")
                .POST(HttpRequest.BodyPublishers.ofString(HttpApiTest.runBody("x"))));
        assertThat(nulHeader.statusCode()).isEqualTo(400);
        assertThat(serve.runRows()).isEqualTo(rows);
    }
}
