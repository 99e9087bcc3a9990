package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /v1/runs/{id}/cancel} on a real serve: 200 for a pending run (and again), 409 for a running, done
 * or failed one, 404 unknown, 400 malformed, and only with the admin scope. Runs are written directly, so that no
 * worker moves them while the test looks.
 */
class HttpRunCancelTest {

    static TestServe serve;
    static String admin = ApiTokens.generate(new SecureRandom());
    static String reader = ApiTokens.generate(new SecureRandom());

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of(Setting.API_TOKENS, String.join(";",
                new ApiToken("admin", Set.of(Scope.ADMIN), ApiTokens.sha256(admin)).line(),
                new ApiToken("reader", Set.of(Scope.READ), ApiTokens.sha256(reader)).line())));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void aPendingRunIsCancelled_aRunningOneCancelling_finishedOnesAreRefused() throws Exception {
        UUID pending = insert("pending");
        HttpResponse<String> r = cancel(pending, admin);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(TestServe.json(r).get("status").asText()).isEqualTo("cancelled");
        assertThat(cancel(pending, admin).statusCode()).isEqualTo(200);
        assertThat(TestServe.json(serve.get("/v1/runs/" + pending, reader)).get("status").asText())
                .isEqualTo("cancelled");
        assertThat(TestServe.json(serve.get("/v1/runs?status=cancelled", reader)).get("runs")).hasSize(1);

        UUID running = insert("running");
        HttpResponse<String> asked = cancel(running, admin);
        assertThat(asked.statusCode()).as(asked.body()).isEqualTo(202);
        assertThat(TestServe.json(asked).get("status").asText()).isEqualTo("cancelling");
        assertThat(cancel(running, admin).statusCode()).as("again: the same answer").isEqualTo(202);
        assertThat(TestServe.json(serve.get("/v1/runs/" + running, reader)).get("status").asText())
                .isEqualTo("cancelling");
        assertThat(TestServe.json(serve.get("/v1/runs?status=cancelling", reader)).get("runs")).hasSize(1);
        assertThat(TestServe.json(serve.get("/v1/runs?status=running", reader)).get("runs")).isEmpty();

        for (String status : new String[] {"done", "failed", "expired"}) {
            HttpResponse<String> refused = cancel(insert(status), admin);
            assertThat(refused.statusCode()).as(status + ": " + refused.body()).isEqualTo(409);
            assertThat(TestServe.json(refused).get("error").asText()).contains("is " + status);
        }
        assertThat(cancel(UUID.randomUUID(), admin).statusCode()).isEqualTo(404);
        HttpResponse<String> malformed = serve.send(serve.request("/v1/runs/nope/cancel")
                .header("Authorization", "Bearer " + admin).POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(malformed.statusCode()).isEqualTo(400);
    }

    @Test
    void cancellingNeedsTheAdminScope() throws Exception {
        UUID pending = insert("pending");
        assertThat(cancel(pending, reader).statusCode()).isEqualTo(403);
        assertThat(TestServe.json(serve.get("/v1/runs/" + pending, reader)).get("status").asText())
                .isEqualTo("pending");
    }

    private static HttpResponse<String> cancel(UUID id, String token) throws Exception {
        return serve.send(serve.request("/v1/runs/" + id + "/cancel").header("Authorization", "Bearer " + token)
                .POST(HttpRequest.BodyPublishers.noBody()));
    }

    private static UUID insert(String status) throws Exception {
        UUID id = UUID.randomUUID();
        try (Connection c = DriverManager.getConnection(DemoEndToEndTest.DATABASE)) {
            c.createStatement().execute("INSERT INTO " + serve.schema + ".runs (id, idempotency_key, input_hash,"
                    + " session_id, user_id, input, status) VALUES ('" + id + "', 'cancel-" + id + "', 'h', 's', 'u',"
                    + " 'x', '" + status + "')");
        }
        return id;
    }
}
