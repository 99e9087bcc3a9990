package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Generated requests against a real serve: methods, paths, query strings, headers and bodies drawn from a seeded
 * generator, each sent whole over a socket of its own. For every one: an answer arrives (no hang), it is not a
 * server error (no 5xx), and if it refuses the request, nothing was written (runs rows and stream length
 * unchanged). The seed is printed and can be given with {@code -Drunbus.fuzz.seed=N}; the case count with
 * {@code -Drunbus.fuzz.cases=N}.
 *
 * <p>A hang is what each request's 15 s read timeout catches; the whole run is bounded only against a runaway (10
 * minutes): its 3,000 cases of four round trips each take 20 s on an idle machine and over a minute on a busy one,
 * which the suite's default 60 s timeout mistook for a hang.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class HttpFuzzTest {

    static final int CASES = Integer.getInteger("runbus.fuzz.cases", 3000);
    static TestServe serve;
    static String token = ApiTokens.generate(new SecureRandom());

    @BeforeAll
    static void start() {
        HoldingHandler.reset();
        serve = TestServe.start(Map.of(
                Setting.API_TOKENS, new ApiToken("fuzz", EnumSet.allOf(Scope.class), ApiTokens.sha256(token)).line(),
                Setting.SUBMIT_RATE, "0", Setting.MAX_BODY, "2048", Setting.REQUEST_TIMEOUT, "2s",
                Setting.HANDLER, HoldingHandler.class.getName()));
    }

    @AfterAll
    static void stop() {
        HoldingHandler.release();
        serve.close();
    }

    @Test
    void generatedRequestsNeverAnswer5xxNorHangNorWriteWhenRefused() throws Exception {
        long seed = Long.getLong("runbus.fuzz.seed", System.nanoTime());
        System.out.println("HttpFuzzTest seed " + seed + " (rerun with -Drunbus.fuzz.seed=" + seed + ")");
        Random random = new Random(seed);
        Map<Integer, Integer> statuses = new TreeMap<>();
        for (int i = 0; i < CASES; i++) {
            byte[] request = new RequestGenerator(random, token).next();
            long rows = serve.runRows();
            long entries = serve.streamLength();
            int status = send(request, i, seed);
            statuses.merge(status, 1, Integer::sum);
            String what = "case " + i + " of seed " + seed + ":\n" + new String(request, StandardCharsets.ISO_8859_1);
            assertThat(status).as(what).isBetween(200, 499);
            if (status >= 400) {
                assertThat(serve.runRows()).as("rows after a refused " + what).isEqualTo(rows);
                assertThat(serve.streamLength()).as("stream after a refused " + what).isEqualTo(entries);
            }
        }
        System.out.println("HttpFuzzTest statuses " + statuses);
        // The generator reaches both sides: accepted requests and each kind of refusal.
        assertThat(statuses).containsKeys(200, 201, 400, 401, 404, 405, 415);
    }

    private static int send(byte[] request, int i, long seed) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", serve.server.port()), 5000);
            s.setSoTimeout(15_000);
            OutputStream out = s.getOutputStream();
            out.write(request);
            out.flush();
            s.shutdownOutput();
            String head = readHead(s.getInputStream());
            if (!head.startsWith("HTTP/1.1 ")) {
                throw new AssertionError("case " + i + " of seed " + seed + ": no HTTP answer, got '" + head + "'");
            }
            return Integer.parseInt(head.substring(9, 12));
        } catch (SocketTimeoutException e) {
            throw new AssertionError("case " + i + " of seed " + seed + " hung:\n"
                    + new String(request, StandardCharsets.ISO_8859_1), e);
        }
    }

    private static String readHead(InputStream in) throws Exception {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0 && b != '\n') {
            line.write(b);
        }
        return line.toString(StandardCharsets.ISO_8859_1).trim();
    }

    /** One random request, mostly near what the API expects, sometimes far from it. */
    static final class RequestGenerator {
        private static final List<String> METHODS = List.of("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS",
                "HEAD", "TRACE", "get", "FOO");
        private static final List<String> ROUTES = List.of("/v1/runs", "/v1/runs/{uuid}", "/v1/runs/{id}",
                "/v1/runs/{uuid}/events", "/v1/runs/{id}/events", "/v1/dead-letters", "/v1/dead-letters/{id}/replay",
                "/v1/scheduled", "/v1/scheduled/{id}", "/v1/streams", "/v1/streams/{id}/partitions", "/health",
                "/metrics", "/{id}", "/v1/{id}", "//v1//runs", "/v1/runs/../streams", "/v1/runs/%2e%2e/streams");
        private static final List<String> QUERY = List.of("after", "limit", "topic", "group", "token", "x");
        private static final List<String> PIECES = List.of("", "0", "-1", "1-1", "1-1@0", "1-1@99",
                "18446744073709551615-18446744073709551615", "18446744073709551616-0", "zzz", "..", "%2e%2e%2f",
                "%00", "%ff", "%", "a b", "{x}", "#", "runs", "run-workers", "\u00e9", "%C3%A9", "0000000000000001-00000001",
                "x".repeat(300), "1".repeat(30), "null", "true", "[]", "%0d%0a");
        private static final List<String> TYPES = List.of("application/json", "application/json; charset=utf-8",
                "APPLICATION/JSON", "text/plain", "application/x-www-form-urlencoded", "", "multipart/form-data");

        private final Random r;
        private final String token;

        RequestGenerator(Random r, String token) {
            this.r = r;
            this.token = token;
        }

        byte[] next() {
            boolean submission = r.nextInt(4) == 0;
            String method = submission ? "POST" : r.nextInt(10) < 7 ? (r.nextBoolean() ? "GET" : "POST") : pick(METHODS);
            String path = (submission ? "/v1/runs" : pick(ROUTES)).replace("{uuid}", java.util.UUID.randomUUID().toString())
                    .replace("{id}", pick(PIECES).replace(" ", "%20").replace("#", "%23"));
            StringBuilder target = new StringBuilder(path);
            int params = r.nextInt(3);
            for (int i = 0; i < params; i++) {
                target.append(i == 0 ? '?' : '&').append(pick(QUERY)).append('=')
                        .append(pick(PIECES).replace(" ", "+").replace("#", "%23"));
            }
            byte[] body = body();
            StringBuilder head = new StringBuilder();
            head.append(method).append(' ').append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
            int auth = r.nextInt(10);
            if (auth < 7) {
                head.append("Authorization: Bearer ").append(token).append("\r\n");
            } else if (auth < 9) {
                head.append("Authorization: ").append(pick(List.of("Bearer", "Bearer x", "Basic Zm9vOmJhcg==",
                        "Bearer " + token.substring(0, 10), "bearer " + token + " extra"))).append("\r\n");
            }
            if (r.nextInt(10) < 8) {
                head.append("Content-Type: ").append(pick(TYPES)).append("\r\n");
            }
            if (r.nextInt(4) == 0) {
                head.append("Idempotency-Key: ").append(pick(PIECES).replace("\r", "").replace("\n", ""))
                        .append("\r\n");
            }
            if (r.nextInt(20) == 0) {
                head.append("X-Padding: ").append("p".repeat(r.nextInt(20_000))).append("\r\n");
            }
            boolean chunked = body.length > 0 && r.nextInt(5) == 0;
            if (chunked) {
                head.append("Transfer-Encoding: chunked\r\n\r\n");
            } else {
                int length = body.length;
                if (r.nextInt(20) == 0) {
                    length = Math.max(0, length - 1 - r.nextInt(Math.max(1, length))); // claims less than sent
                }
                head.append("Content-Length: ").append(length).append("\r\n\r\n");
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.writeBytes(head.toString().getBytes(StandardCharsets.UTF_8));
            if (chunked) {
                out.writeBytes((Integer.toHexString(body.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.writeBytes(body);
                out.writeBytes("\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            } else {
                out.writeBytes(body);
            }
            return out.toByteArray();
        }

        private byte[] body() {
            switch (r.nextInt(9)) {
                case 8:
                    return HttpApiTest.runBody("fuzz " + r.nextLong()).getBytes(StandardCharsets.UTF_8);
                case 0:
                    return new byte[0];
                case 1: {
                    byte[] junk = new byte[r.nextInt(3000)];
                    r.nextBytes(junk);
                    return junk;
                }
                case 2:
                    return "{\"session_id\":\"s\",\"user_id\":\"u\",\"input\":\"x\"".getBytes(StandardCharsets.UTF_8);
                default: {
                    StringBuilder json = new StringBuilder("{");
                    for (String field : List.of("session_id", "user_id", "input", "idempotency_key")) {
                        if (r.nextInt(8) == 0) {
                            continue;
                        }
                        json.append(json.length() > 1 ? "," : "").append('"').append(field).append("\":")
                                .append(value());
                    }
                    return json.append('}').toString().getBytes(StandardCharsets.UTF_8);
                }
            }
        }

        private String value() {
            switch (r.nextInt(10)) {
                case 0: return "null";
                case 1: return Integer.toString(r.nextInt());
                case 2: return "{\"nested\":[1,2,{\"a\":\"\\u0000\"}]}";
                case 3: return "\"" + "y".repeat(r.nextInt(2500)) + "\"";
                case 4: return "\"a\\u0000b\"";
                case 5: return "\"\"";
                case 6: return "[\"x\"]";
                default: return "\"" + pick(PIECES).replace("\\", "").replace("\"", "") + r.nextInt(1000) + "\"";
            }
        }

        private <T> T pick(List<T> from) {
            return from.get(r.nextInt(from.size()));
        }
    }
}
