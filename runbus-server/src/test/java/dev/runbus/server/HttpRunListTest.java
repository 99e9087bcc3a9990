package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/runs} on a real serve: filters, newest first, a cursor that walks runs created at one instant
 * without skipping or repeating, no idempotency keys, the read scope, and a 400 naming each bad parameter.
 */
class HttpRunListTest {

    static TestServe serve;
    static String reader = ApiTokens.generate(new SecureRandom());
    static String submitter = ApiTokens.generate(new SecureRandom());

    @BeforeAll
    static void start() throws Exception {
        serve = TestServe.start(Map.of(Setting.API_TOKENS, String.join(";",
                new ApiToken("reader", Set.of(Scope.READ), ApiTokens.sha256(reader)).line(),
                new ApiToken("submitter", Set.of(Scope.SUBMIT), ApiTokens.sha256(submitter)).line())));
        // Runs written directly, so that their times and statuses are known and no worker moves them.
        insert(30, "2026-01-01T00:00:00Z", "done", "u1", "s1");
        insert(5, "2026-01-01T00:00:05Z", "failed", "u2", "s1");
        insert(4, "2025-12-31T23:00:00Z", "pending", "u1", "s2");
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void pagesWalkEveryRunNewestFirst_withoutIdempotencyKeys() throws Exception {
        List<JsonNode> all = new ArrayList<>();
        String next = null;
        int pages = 0;
        do {
            JsonNode page = ok("/v1/runs?limit=8" + (next == null ? "" : "&cursor=" + enc(next)));
            page.get("runs").forEach(all::add);
            next = page.get("next_cursor").isNull() ? null : page.get("next_cursor").asText();
            pages++;
        } while (next != null);
        assertThat(pages).isEqualTo(5);
        assertThat(all).hasSize(39);
        Set<String> ids = new HashSet<>();
        all.forEach(r -> ids.add(r.get("run_id").asText()));
        assertThat(ids).hasSize(39);
        assertThat(all.subList(0, 5)).allMatch(r -> r.get("status").asText().equals("failed"));
        assertThat(all.subList(35, 39)).allMatch(r -> r.get("status").asText().equals("pending"));
        assertThat(all).allMatch(r -> !r.has("idempotency_key") && !r.has("replies"));
        for (int i = 1; i < all.size(); i++) {
            String a = all.get(i - 1).get("created_at").asText() + all.get(i - 1).get("run_id").asText();
            String b = all.get(i).get("created_at").asText() + all.get(i).get("run_id").asText();
            assertThat(a).as("run %d", i).isGreaterThan(b); // same length and format: text order is time, then id
        }
        assertThat(ok("/v1/runs").get("runs")).hasSize(39);
    }

    @Test
    void filtersCombine() throws Exception {
        assertThat(ok("/v1/runs?status=done").get("runs")).hasSize(30);
        assertThat(ok("/v1/runs?user=u1").get("runs")).hasSize(34);
        assertThat(ok("/v1/runs?user=u1&session=s2").get("runs")).hasSize(4)
                .allMatch(r -> r.get("status").asText().equals("pending"));
        assertThat(ok("/v1/runs?created_after=" + enc("2026-01-01T00:00:00Z")).get("runs")).hasSize(5);
        assertThat(ok("/v1/runs?created_before=" + enc("2026-01-01T01:00:00+01:00")).get("runs")).hasSize(4);
        assertThat(ok("/v1/runs?status=running").get("runs")).isEmpty();
        assertThat(ok("/v1/runs?status=running").get("next_cursor").isNull()).isTrue();
    }

    @Test
    void badParametersAnswer400NamingThem() throws Exception {
        assertBad("status=lost", "status");
        assertBad("limit=0", "limit");
        assertBad("limit=201", "limit");
        assertBad("limit=ten", "limit");
        assertBad("created_after=2026-01-01", "created_after");
        assertBad("created_before=" + enc("2026-01-01T00:00:00"), "created_before");
        assertBad("user=", "user");
        assertBad("cursor=nonsense", "cursor");
        assertBad("cursor=" + cursor("streams:runs"), "cursor"); // a cursor of another listing
        assertBad("cursor=" + cursor("runs:yesterday,not-a-uuid"), "cursor");
    }

    @Test
    void listingNeedsTheReadScope() throws Exception {
        assertThat(serve.get("/v1/runs", submitter).statusCode()).isEqualTo(403);
        assertThat(serve.get("/v1/runs", null).statusCode()).isEqualTo(401);
    }

    private static void assertBad(String query, String field) throws Exception {
        HttpResponse<String> r = serve.get("/v1/runs?" + query, reader);
        assertThat(r.statusCode()).as(query + ": " + r.body()).isEqualTo(400);
        assertThat(TestServe.json(r).get("field").asText()).as(query).isEqualTo(field);
    }

    private static JsonNode ok(String path) throws Exception {
        HttpResponse<String> r = serve.get(path, reader);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return TestServe.json(r);
    }

    /** A cursor as {@code Cursor} encodes one, around {@code text}. */
    private static String cursor(String text) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static void insert(int n, String createdAt, String status, String user, String session)
            throws Exception {
        try (Connection c = DriverManager.getConnection(DemoEndToEndTest.DATABASE)) {
            c.createStatement().execute("INSERT INTO " + serve.schema + ".runs (id, idempotency_key, input_hash,"
                    + " session_id, user_id, input, status, created_at) SELECT gen_random_uuid(), 'list-' ||"
                    + " gen_random_uuid(), 'h', '" + session + "', '" + user + "', 'x', '" + status + "', '"
                    + createdAt + "' FROM generate_series(1, " + n + ")");
        }
    }
}
