package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.runs.NewRun;
import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Idempotency keys over HTTP belong to the token that sends them: another token's key of the same text is another
 * key, so no client can take, block or discover another's run through a key, while a token's own retry still
 * finds its own run.
 */
class IdempotencyScopeTest {

    static TestServe serve;
    static String alice = ApiTokens.generate(new SecureRandom());
    static String bob = ApiTokens.generate(new SecureRandom());

    @BeforeAll
    static void start(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("tokens");
        Files.writeString(file, String.join("\n",
                new ApiToken("alice", Set.of(Scope.SUBMIT), ApiTokens.sha256(alice)).line(),
                new ApiToken("bob", Set.of(Scope.SUBMIT), ApiTokens.sha256(bob)).line()));
        serve = TestServe.start(Map.of(Setting.API_TOKENS_FILE, file.toString()));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    static HttpResponse<String> submit(String token, String input, String key) throws Exception {
        HttpRequest.Builder b = serve.request("/v1/runs").header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + token)
                .POST(HttpRequest.BodyPublishers.ofString(HttpApiTest.runBody(input)));
        if (key != null) {
            b.header("Idempotency-Key", key);
        }
        return serve.send(b);
    }

    @Test
    void anotherTokensKeyOfTheSameTextIsAnotherKey() throws Exception {
        String key = "order-" + UUID.randomUUID();
        HttpResponse<String> first = submit(alice, "alice's input", key);
        assertThat(first.statusCode()).isEqualTo(201);
        String aliceRun = TestServe.json(first).get("run_id").asText();

        // Another body under the same key text: neither a conflict nor a sight of alice's run.
        HttpResponse<String> other = submit(bob, "bob's input", key);
        assertThat(other.statusCode()).as(other.body()).isEqualTo(201);
        assertThat(other.body()).doesNotContain(aliceRun);
        String bobRun = TestServe.json(other).get("run_id").asText();
        assertThat(bobRun).isNotEqualTo(aliceRun);

        // The same body too: bob gets a run of his own, not alice's as a duplicate.
        String sameKey = "same-" + UUID.randomUUID();
        String aliceSame = TestServe.json(submit(alice, "same input", sameKey)).get("run_id").asText();
        HttpResponse<String> bobSame = submit(bob, "same input", sameKey);
        assertThat(bobSame.statusCode()).isEqualTo(201);
        assertThat(TestServe.json(bobSame).get("run_id").asText()).isNotEqualTo(aliceSame);
    }

    @Test
    void aTokensOwnRetryFindsItsOwnRunAndItsOwnConflictNamesItsOwnRun() throws Exception {
        String key = "retry-" + UUID.randomUUID();
        String aliceRun = TestServe.json(submit(alice, "first", key)).get("run_id").asText();
        String bobRun = TestServe.json(submit(bob, "first", key)).get("run_id").asText();

        HttpResponse<String> retry = submit(alice, "first", key);
        assertThat(retry.statusCode()).isEqualTo(200);
        JsonNode again = TestServe.json(retry);
        assertThat(again.get("run_id").asText()).isEqualTo(aliceRun);
        assertThat(again.get("created").asBoolean()).isFalse();

        HttpResponse<String> conflict = submit(bob, "another body", key);
        assertThat(conflict.statusCode()).isEqualTo(409);
        JsonNode body = TestServe.json(conflict);
        assertThat(body.get("field").asText()).isEqualTo("idempotency_key");
        // The client's own key and run, never the stored form of the key nor another token's run.
        assertThat(body.get("error").asText()).contains("'" + key + "'").contains(bobRun).doesNotContain(aliceRun)
                .doesNotContain("scoped:");
    }

    @Test
    void withoutAKeyTwoTokensSendingTheSameBodyGetTwoRuns() throws Exception {
        // The derived key covers session, user, input and the second: the same for both tokens, whose
        // submissions below nearly always share a second. Each must still get a run of its own.
        for (int i = 0; i < 3; i++) {
            String input = "no key " + UUID.randomUUID();
            HttpResponse<String> a = submit(alice, input, null);
            HttpResponse<String> b = submit(bob, input, null);
            assertThat(a.statusCode()).isEqualTo(201);
            assertThat(b.statusCode()).as(b.body()).isEqualTo(201);
            assertThat(TestServe.json(b).get("run_id").asText()).isNotEqualTo(TestServe.json(a).get("run_id").asText());
        }
    }

    @Test
    void aKeyGivenThroughTheJavaApiIsNotOneOverHttp() throws Exception {
        // Keys of Runs.submit stay global, as were every key stored before keys had scopes: an HTTP client
        // sending the same text neither finds nor conflicts with that run.
        String key = "java-" + UUID.randomUUID();
        String javaRun = serve.server.runs().submit(new NewRun("s1", "u1", "from java", key)).runId().toString();
        HttpResponse<String> r = submit(alice, "from http", key);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        assertThat(r.body()).doesNotContain(javaRun);
        assertThat(serve.server.runs().submit(new NewRun("s1", "u1", "from java", key)).runId().toString())
                .isEqualTo(javaRun);
    }
}
