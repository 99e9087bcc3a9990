package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * serve without tokens on loopback answers this machine only, not whatever reaches loopback on a browser's behalf:
 * a request for another host name (DNS rebinding) or from another site's page (Origin, Sec-Fetch-Site) is refused,
 * and a state-changing request must be JSON, which a cross-site form cannot send. Over real HTTP, with the raw
 * requests a browser would send (the JDK client does not let a caller set Host).
 */
class HttpNoTokensTest {

    static TestServe serve;

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of());
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void aTokensFileWithoutTokensIsAnError(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("tokens");
        Files.writeString(file, "# tokens go here\n\n   \n# none yet\n");
        Cli c = Cli.run("serve", "--api-tokens-file", file.toString(), "--port", "0");
        assertThat(c.exitCode).as(c.err).isEqualTo(2);
        assertThat(c.err).contains("--api-tokens-file " + file).contains("no token");
    }

    /**
     * Token lines come from the file, the environment or the config file; there is no flag for them, so that a
     * token pasted by mistake in place of its line never shows in the process list. Errors name where the line
     * came from.
     */
    @Test
    void tokenLinesHaveNoFlagAndTheirErrorsNameTheVariable(@TempDir Path dir) throws Exception {
        Cli flag = Cli.run("serve", "--api-tokens", "a:read:" + "0".repeat(64), "--port", "0");
        assertThat(flag.exitCode).isEqualTo(2);
        assertThat(flag.err).contains("Unknown option").contains("'--api-tokens'");
        Cli env = Cli.run(new Environment(Map.of("RUNBUS_API_TOKENS", "a:root:" + "0".repeat(64)), dir), "serve",
                "--port", "0");
        assertThat(env.exitCode).as(env.err).isEqualTo(2);
        assertThat(env.err).contains("RUNBUS_API_TOKENS").contains("unknown scope 'root'").doesNotContain("--api-tokens ");
    }

    @Test
    void onlyALoopbackHostIsAnswered() throws Exception {
        int port = serve.server.port();
        for (String host : new String[] {"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "[::1]:" + port,
                "127.0.0.1"}) {
            assertThat(raw("GET", "/v1/streams", "Host: " + host).status).as(host).isEqualTo(200);
        }
        for (String host : new String[] {"attacker.example:" + port, "attacker.example", "127.0.0.1.attacker.example",
                "10.0.0.1:" + port}) {
            Raw r = raw("GET", "/v1/streams", "Host: " + host);
            assertThat(r.status).as(host).isEqualTo(403);
            assertThat(r.json().get("error").asText()).as(host).contains("Host");
            assertThat(r.json().has("request_id")).isTrue();
        }
        assertThat(raw("GET", "/health", "Host: attacker.example").status).isEqualTo(403);
    }

    @Test
    void aCrossSiteRequestIsRefused() throws Exception {
        int port = serve.server.port();
        String host = "Host: 127.0.0.1:" + port;
        for (String[] headers : new String[][] {{host, "Origin: https://attacker.example"},
                {host, "Origin: null"}, {host, "Origin: http://localhost:3000"}, {host, "Sec-Fetch-Site: cross-site"},
                {host, "Sec-Fetch-Site: same-site"}}) {
            Raw r = raw("GET", "/v1/dead-letters", headers);
            assertThat(r.status).as(String.join(", ", headers)).isEqualTo(403);
            assertThat(r.json().get("error").asText()).contains("cross-site");
        }
        // A page of this origin, or a request the user typed.
        assertThat(raw("GET", "/v1/dead-letters", host, "Origin: http://127.0.0.1:" + port,
                "Sec-Fetch-Site: same-origin").status).isEqualTo(200);
        assertThat(raw("GET", "/v1/dead-letters", host, "Sec-Fetch-Site: none").status).isEqualTo(200);
        // A cross-site form posting a replay: refused before the route.
        Raw form = raw("POST", "/v1/dead-letters/1-1/replay", host, "Origin: https://attacker.example",
                "Content-Type: application/x-www-form-urlencoded");
        assertThat(form.status).isEqualTo(403);
    }

    @Test
    void aStateChangingRequestMustBeJson() throws Exception {
        String host = "Host: 127.0.0.1:" + serve.server.port();
        // What a form (or a no-cors fetch) can send: no type, or one of the three "simple" ones.
        for (String type : new String[] {null, "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                "text/plain"}) {
            Raw r = type == null ? raw("POST", "/v1/dead-letters/1-1/replay", host)
                    : raw("POST", "/v1/dead-letters/1-1/replay", host, "Content-Type: " + type);
            assertThat(r.status).as(type).isEqualTo(415);
            assertThat(r.json().get("error").asText()).contains("application/json");
        }
        // JSON passes the check; there is no such dead letter.
        assertThat(raw("POST", "/v1/dead-letters/1-1/replay", host, "Content-Type: application/json").status)
                .isEqualTo(404);
    }

    @Test
    void aMethodOverrideHeaderIsRefused() throws Exception {
        String host = "Host: 127.0.0.1:" + serve.server.port();
        // Javalin would route this GET to the replay route (POST) by X-HTTP-Method-Override; the others are honoured
        // by proxies and frameworks. Each is refused before any route, whatever method it names.
        for (String header : new String[] {"X-HTTP-Method-Override: POST", "X-HTTP-Method: POST",
                "X-Method-Override: POST", "x-http-method-override: GET"}) {
            Raw r = raw("GET", "/v1/dead-letters/1-1/replay", host, "Content-Type: application/json", header);
            assertThat(r.status).as(header).isEqualTo(400);
            assertThat(r.json().get("error").asText()).as(header).contains("is not accepted");
            assertThat(r.json().has("request_id")).isTrue();
        }
        assertThat(raw("GET", "/v1/streams", host, "X-HTTP-Method-Override: DELETE").status).isEqualTo(400);
        assertThat(raw("GET", "/v1/streams", host).status).isEqualTo(200);
    }

    /** A status and body from one request written by hand. */
    record Raw(int status, String body) {
        JsonNode json() throws Exception {
            return Json.MAPPER.readTree(body);
        }
    }

    private static Raw raw(String method, String path, String... headers) throws Exception {
        RawHttp r = RawHttp.send(serve.server.port(), null, method, path, headers);
        return new Raw(r.status(), r.body());
    }
}
