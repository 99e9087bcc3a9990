package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What {@code POST /v1/runs} and {@code GET /v1/runs} take, on a real serve: values PostgreSQL would refuse, change or
 * could not index are a 400 naming their field before PostgreSQL sees them (they were 503 "the database is
 * unavailable", with Retry-After, a stack trace in the log, and a client retrying forever), and a listing that
 * PostgreSQL does not answer within --api-statement-timeout is a 503 with Retry-After.
 */
class HttpRunInputsTest {

    private static final SecureRandom RANDOM = new SecureRandom();
    static TestServe serve;

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of(Setting.API_STATEMENT_TIMEOUT, "500ms"));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    /** 3000 bytes that do not compress: more than a btree entry of the listing's indexes holds. */
    @Test
    void anIdLongerThanTheIndexesHold_is400NamingItAndWritesNothing() throws Exception {
        long rows = serve.runRows();
        assertRefused(body(incompressible(3000), "u", "\"x\""), "session_id", "has 3000 bytes in UTF-8");
        assertRefused(body("s", incompressible(2001), "\"x\""), "user_id", "has 2001 bytes in UTF-8");
        assertThat(serve.runRows()).isEqualTo(rows);
        assertThat(post(body("s", incompressible(2000), "\"x\"")).statusCode()).isEqualTo(201);
    }

    /** A lone surrogate has no UTF-8 form: it was stored as '?', so that "s\ud800" and "s\udbff" were one session. */
    @Test
    void aLoneSurrogateInAnyString_is400NamingTheField() throws Exception {
        long rows = serve.runRows();
        assertRefused("{\"session_id\":\"s\\ud800\",\"user_id\":\"u\",\"input\":\"x\"}", "session_id", "surrogate");
        assertRefused("{\"session_id\":\"s\",\"user_id\":\"u\\udfff\",\"input\":\"x\"}", "user_id", "surrogate");
        assertRefused("{\"session_id\":\"s\",\"user_id\":\"u\",\"input\":\"x\\ud83d\"}", "input", "surrogate");
        assertRefused("{\"session_id\":\"s\",\"user_id\":\"u\",\"input\":{\"q\":[\"\\udc00\"]}}", "input", "surrogate");
        assertRefused("{\"session_id\":\"s\",\"user_id\":\"u\",\"input\":\"x\",\"idempotency_key\":\"k\\ud800\"}",
                "idempotency_key", "surrogate");
        assertThat(serve.runRows()).isEqualTo(rows);
        // A whole pair is a character like any other.
        assertThat(post("{\"session_id\":\"s\\ud83d\\ude00\",\"user_id\":\"u\",\"input\":\"x\"}").statusCode())
                .isEqualTo(201);
    }

    @Test
    void filtersPostgresWouldRefuse_are400NamingTheParameter() throws Exception {
        assertBadFilter("user=%00", "user");
        assertBadFilter("session=s%00", "session");
        assertBadFilter("user=" + "u".repeat(2001), "user");
        for (String t : new String[] {"-4714-01-01T00:00:00Z", "+300000-01-01T00:00:00Z", "0000-12-31T23:59:59Z"}) {
            assertBadFilter("created_after=" + enc(t), "created_after");
            assertBadFilter("created_before=" + enc(t), "created_before");
            assertBadFilter("cursor=" + cursor("runs:" + t + "," + UUID.randomUUID()), "cursor");
        }
        assertBadFilter("cursor=" + cursor("runs:2026-01-01T00:00:00Z,1-2-3-4-5"), "cursor");
        // The ends of the range are PostgreSQL's to answer.
        assertThat(serve.get("/v1/runs?created_after=" + enc("0001-01-01T00:00:00Z") + "&created_before="
                + enc("9999-12-31T23:59:59.999999Z"), null).statusCode()).isEqualTo(200);
    }

    /** The listing waits behind a lock on the runs table, as behind a migration: 503 after the timeout, not a hang. */
    @Test
    void aListingLongerThanTheStatementTimeout_is503WithRetryAfter() throws Exception {
        try (Connection locker = DriverManager.getConnection(DemoEndToEndTest.DATABASE)) {
            locker.setAutoCommit(false);
            locker.createStatement().execute("LOCK TABLE " + serve.schema + ".runs IN ACCESS EXCLUSIVE MODE");
            try {
                HttpResponse<String> r = serve.get("/v1/runs", null); // 20 s for the answer, 40 times the timeout
                assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
                assertThat(r.headers().firstValue("Retry-After")).contains("1");
                // Said as what it is: the database answered, the read was too long.
                assertThat(TestServe.json(r).get("error").asText()).contains("took longer than the server allows");
            } finally {
                locker.rollback();
            }
        }
        assertThat(serve.get("/v1/runs", null).statusCode()).isEqualTo(200);
    }

    private static void assertRefused(String body, String field, String problem) throws Exception {
        HttpResponse<String> r = post(body);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        JsonNode error = TestServe.json(r);
        assertThat(error.get("field").asText()).isEqualTo(field);
        assertThat(error.get("error").asText()).startsWith("field '" + field + "' ").contains(problem);
    }

    private static void assertBadFilter(String query, String field) throws Exception {
        HttpResponse<String> r = serve.get("/v1/runs?" + query, null);
        assertThat(r.statusCode()).as(query + ": " + r.body()).isEqualTo(400);
        assertThat(TestServe.json(r).get("field").asText()).as(query).isEqualTo(field);
    }

    private static HttpResponse<String> post(String body) throws Exception {
        return serve.send(serve.request("/v1/runs").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)));
    }

    private static String body(String session, String user, String inputJson) {
        return "{\"session_id\":\"" + session + "\",\"user_id\":\"" + user + "\",\"input\":" + inputJson + "}";
    }

    private static String cursor(String text) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String incompressible(int bytes) {
        String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        StringBuilder b = new StringBuilder(bytes);
        for (int i = 0; i < bytes; i++) {
            b.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
        }
        return b.toString();
    }
}
