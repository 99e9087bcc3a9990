package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.HttpApi;
import dev.runbus.server.http.Scope;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tokens and scopes in front of every route, against a real serve on the test servers. */
class HttpAccessTest {

    static TestServe serve;
    static String submitter = ApiTokens.generate(new SecureRandom());
    static String reader = ApiTokens.generate(new SecureRandom());
    static String admin = ApiTokens.generate(new SecureRandom());

    @BeforeAll
    static void start(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("tokens");
        Files.writeString(file, String.join("\n",
                "# tokens of the test",
                new ApiToken("ingest", Set.of(Scope.SUBMIT), ApiTokens.sha256(submitter)).line(),
                new ApiToken("dashboard", Set.of(Scope.READ), ApiTokens.sha256(reader)).line(),
                "",
                new ApiToken("ops", Set.of(Scope.ADMIN), ApiTokens.sha256(admin)).line()));
        serve = TestServe.start(Map.of(Setting.API_TOKENS_FILE, file.toString()));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void withoutAValidTokenEveryScopedRouteAnswers401TheSameWay() throws Exception {
        List<HttpRequest.Builder> requests = List.of(
                serve.request("/v1/runs/" + java.util.UUID.randomUUID()),
                serve.request("/v1/streams"),
                serve.request("/metrics"),
                serve.request("/v1/dead-letters"),
                serve.request("/v1/scheduled"),
                serve.request("/v1/runs").header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(HttpApiTest.runBody("x"))),
                serve.request("/v1/dead-letters/1-1/replay").POST(HttpRequest.BodyPublishers.noBody()),
                serve.request("/v1/scheduled/0000000000000001-00000001").DELETE());
        List<String> credentials = List.of("", "Bearer ", "Bearer nope", "Bearer " + submitter + "x",
                "Basic " + submitter, "bearer" + reader, "Bearer " + admin.substring(0, admin.length() - 1));
        long rows = serve.runRows();
        long entries = serve.streamLength();
        for (HttpRequest.Builder template : requests) {
            for (String credential : credentials) {
                HttpRequest.Builder b = template.copy();
                if (!credential.isEmpty()) {
                    b.header("Authorization", credential);
                }
                HttpResponse<String> r = serve.send(b);
                assertThat(r.statusCode()).as(r.request() + " with '" + credential + "'").isEqualTo(401);
                assertThat(r.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"runbus\"");
                JsonNode body = TestServe.json(r);
                // One message whatever was wrong: no hint whether the header, the scheme or the token failed.
                assertThat(body.get("error").asText())
                        .isEqualTo("authentication required: send Authorization: Bearer <token>");
                assertThat(body.get("request_id").asText()).isEqualTo(r.headers().firstValue("X-Request-Id").get());
            }
        }
        assertThat(serve.runRows()).isEqualTo(rows);
        assertThat(serve.streamLength()).isEqualTo(entries);
    }

    @Test
    void eachScopeOpensItsRoutesOnly() throws Exception {
        long rows = serve.runRows();
        HttpResponse<String> refused = serve.submit("from a reader", reader);
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(TestServe.json(refused).get("error").asText()).contains("'submit' scope");
        assertThat(serve.submit("from the admin", admin).statusCode()).isEqualTo(403);
        assertThat(serve.runRows()).isEqualTo(rows);

        HttpResponse<String> created = serve.submit("from ingest", submitter);
        assertThat(created.statusCode()).isEqualTo(201);
        String runId = TestServe.json(created).get("run_id").asText();
        assertThat(serve.runRows()).isEqualTo(rows + 1);

        assertThat(serve.get("/v1/runs/" + runId, submitter).statusCode()).isEqualTo(403);
        assertThat(serve.get("/v1/runs/" + runId, admin).statusCode()).isEqualTo(403);
        assertThat(serve.get("/v1/runs/" + runId, reader).statusCode()).isEqualTo(200);
        assertThat(serve.get("/v1/streams", reader).statusCode()).isEqualTo(200);
        assertThat(serve.get("/metrics", reader).statusCode()).isEqualTo(200);
        assertThat(serve.get("/metrics", submitter).statusCode()).isEqualTo(403);

        HttpResponse<String> replayByReader = serve.send(serve.request("/v1/dead-letters/1-1/replay")
                .header("Authorization", "Bearer " + reader).POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(replayByReader.statusCode()).isEqualTo(403);
        assertThat(TestServe.json(replayByReader).get("error").asText()).contains("'admin' scope");
        HttpResponse<String> replayByAdmin = serve.send(serve.request("/v1/dead-letters/1-1/replay")
                .header("Authorization", "Bearer " + admin).POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(replayByAdmin.statusCode()).isEqualTo(404);
    }

    @Test
    void headIsNotAWayAroundTheScopes() throws Exception {
        // HEAD is answered where GET is (RFC 9110), through the same access layer: without a token 401.
        for (String path : List.of("/metrics", "/v1/streams", "/v1/runs/" + java.util.UUID.randomUUID())) {
            HttpResponse<String> r = serve.send(serve.request(path).method("HEAD", HttpRequest.BodyPublishers.noBody()));
            assertThat(r.statusCode()).as("HEAD " + path).isEqualTo(401);
        }
    }

    @Test
    void aTokenInTheUrlIsNotOne() throws Exception {
        assertThat(serve.get("/v1/streams?token=" + reader, null).statusCode()).isEqualTo(401);
        assertThat(serve.get("/v1/streams?access_token=" + reader, null).statusCode()).isEqualTo(401);
    }

    @Test
    void healthIsOpenAndSaysNothingButUpOrDown() throws Exception {
        HttpResponse<String> r = serve.get("/health", null);
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode body = TestServe.json(r);
        assertThat(body.get("status").asText()).isEqualTo("ok");
        assertThat(body.get("redis").asText()).isEqualTo("ok");
        assertThat(body.get("postgres").asText()).isEqualTo("ok");
        assertThat(body.has("warning")).isFalse();
        assertThat(r.body()).doesNotContain("127.0.0.1").doesNotContain("5432").doesNotContain("6379");
    }

    @Test
    void aNonLoopbackAddressWithoutTokensIsRefusedUnlessInsecureIsSaid() throws Exception {
        Map<Setting, String> flags = new EnumMap<>(Setting.class);
        flags.put(Setting.HOST, "0.0.0.0");
        assertThatThrownBy(() -> HttpApi.check(Settings.resolve(flags, Map.of(), null)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("refusing to serve 0.0.0.0 without API tokens")
                .hasMessageContaining("--insecure-no-auth");
        flags.put(Setting.HOST, "localhost");
        assertThat(HttpApi.check(Settings.resolve(flags, Map.of(), null)).insecure()).isFalse();
        flags.put(Setting.HOST, "0.0.0.0");
        flags.put(Setting.API_TOKENS, new ApiToken("a", Set.of(Scope.READ), ApiTokens.sha256(reader)).line());
        assertThat(HttpApi.check(Settings.resolve(flags, Map.of(), null)).tokens().size()).isEqualTo(1);

        try (TestServe open = TestServe.start(Map.of(Setting.HOST, "0.0.0.0", Setting.INSECURE_NO_AUTH, "true"))) {
            JsonNode health = TestServe.json(open.get("/health", null));
            assertThat(health.get("warning").asText()).contains("without authentication");
            assertThat(open.submit("anyone", null).statusCode()).isEqualTo(201);
        }
    }

    @Test
    void malformedTokenLinesAreRefusedWithoutPrintingThem() {
        String secret = ApiTokens.generate(new SecureRandom());
        assertThatThrownBy(() -> ApiTokens.parse(List.of(secret), "file"))
                .hasMessage("file line 1: this is a token, not a token line: give NAME:SCOPES:SHA256 (runbus token"
                        + " create prints it)");
        // A name may start like a token does; only a line without a ':' is taken for a pasted token.
        assertThat(ApiTokens.parse(List.of("rbt_ci:read:" + "0".repeat(64)), "file").size()).isEqualTo(1);
        assertThatThrownBy(() -> ApiTokens.parse(List.of("a:read:" + "0".repeat(63)), "file"))
                .hasMessageContaining("line 1: the hash must be 64 hexadecimal digits");
        assertThatThrownBy(() -> ApiTokens.parse(List.of("a:root:" + "0".repeat(64)), "file"))
                .hasMessageContaining("unknown scope 'root'");
        assertThatThrownBy(() -> ApiTokens.parse(List.of("a:read:" + "0".repeat(64), "a:admin:" + "1".repeat(64)),
                "file")).hasMessageContaining("line 2: a second token named 'a'");
        assertThatThrownBy(() -> ApiTokens.parse(List.of("a:read:" + "0".repeat(64), "b:admin:" + "0".repeat(64)),
                "file")).hasMessageContaining("line 2: the same token as an earlier line");
    }

    @Test
    void tokenCreatePrintsATokenOnceAndALineServeAccepts() {
        Cli created = Cli.run("token", "create", "--name", "ci-bot", "--scopes", "submit,read");
        assertThat(created.exitCode).isZero();
        String token = created.out.lines().filter(l -> l.startsWith("token: ")).findFirst().orElseThrow()
                .substring("token: ".length());
        String line = created.out.lines().filter(l -> l.startsWith("line:  ")).findFirst().orElseThrow()
                .substring("line:  ".length());
        assertThat(token).startsWith("rbt_").hasSize(4 + 43);
        assertThat(line).startsWith("ci-bot:submit,read:").doesNotContain(token);
        ApiTokens tokens = ApiTokens.parse(List.of(line), "printed");
        assertThat(tokens.match(token)).map(ApiToken::scopes).hasValue(Set.of(Scope.SUBMIT, Scope.READ));
        assertThat(tokens.match(token + "x")).isEmpty();

        Cli second = Cli.run("token", "create", "--name", "ci-bot", "--scopes", "submit,read");
        assertThat(second.out).doesNotContain(token);
        Cli bad = Cli.run("token", "create", "--name", "x", "--scopes", "root");
        assertThat(bad.exitCode).isEqualTo(2);
        assertThat(bad.err).contains("unknown scope 'root'");
    }
}
