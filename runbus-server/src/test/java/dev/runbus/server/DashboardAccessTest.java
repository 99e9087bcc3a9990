package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.BrowserSessions;
import dev.runbus.server.http.HttpApi;
import dev.runbus.server.http.Scope;
import dev.runbus.testkit.Wait;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's access rules over plain HTTP on a real serve: sign-in sets a session cookie a script cannot
 * read and another site cannot send, the cookie alone changes nothing (a CSRF token is needed), a read session
 * cannot act, sign-out ends the session, a sign-in never redirects off the server, page text is escaped, and
 * every page needs the read scope. Purge ({@code DELETE /v1/dead-letters/{id}}) deletes one dead letter.
 */
class DashboardAccessTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    static final String ADMIN = ApiTokens.generate(new SecureRandom());
    static final String READER = ApiTokens.generate(new SecureRandom());
    static TestServe serve;

    @BeforeAll
    static void start() {
        GatedHandler.OPEN.set(false);
        serve = TestServe.start(Map.of(Setting.HANDLER, GatedHandler.class.getName(),
                Setting.RETRY, "exponential:100ms,2,200ms,0",
                // The test polls run statuses every 10 ms with the token the pages use: no read-rate limit for it.
                Setting.READ_RATE, "0",
                Setting.API_TOKENS, String.join(";",
                        new ApiToken("operator", Set.of(Scope.SUBMIT, Scope.READ, Scope.ADMIN),
                                ApiTokens.sha256(ADMIN)).line(),
                        new ApiToken("viewer", Set.of(Scope.READ), ApiTokens.sha256(READER)).line())));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void aPageWithoutSessionSendsToSignIn_andSignInSetsAStrictHttpOnlyCookie() throws Exception {
        HttpResponse<String> page = serve.send(serve.request("/runs?status=done"));
        assertThat(page.statusCode()).isEqualTo(303);
        assertThat(page.headers().firstValue("Location").orElseThrow())
                .isEqualTo("/login?next=" + URLEncoder.encode("/runs?status=done", StandardCharsets.UTF_8));

        HttpResponse<String> in = signIn(ADMIN, "/runs?status=done", null);
        assertThat(in.statusCode()).isEqualTo(303);
        assertThat(in.headers().firstValue("Location").orElseThrow()).isEqualTo("/runs?status=done");
        String cookie = in.headers().firstValue("Set-Cookie").orElseThrow();
        assertThat(cookie).startsWith(BrowserSessions.COOKIE + "=").contains("HttpOnly").contains("SameSite=Strict")
                .contains("Path=/").doesNotContain("Secure"); // plain HTTP here; HTTPS adds Secure

        HttpResponse<String> shown = serve.send(serve.request("/runs").header("Cookie", cookieOf(in)));
        assertThat(shown.statusCode()).isEqualTo(200);
        assertThat(shown.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/html");
        assertThat(shown.headers().firstValue("Content-Security-Policy").orElseThrow()).contains("script-src 'self'")
                .contains("frame-ancestors 'none'");
        // the session is credentials for the API's reads too
        assertThat(serve.send(serve.request("/v1/runs").header("Cookie", cookieOf(in))).statusCode()).isEqualTo(200);
    }

    @Test
    void aWrongTokenAForeignOriginAndAnOffSiteNextAreRefused() throws Exception {
        HttpResponse<String> wrong = signIn("rbt_wrong", "/", null);
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(wrong.headers().firstValue("Set-Cookie")).isEmpty();

        HttpResponse<String> foreign = signIn(ADMIN, "/", "https://evil.example");
        assertThat(foreign.statusCode()).isEqualTo(403);
        assertThat(foreign.headers().firstValue("Set-Cookie")).isEmpty();

        for (String next : new String[] {"//evil.example/x", "https://evil.example", "/\\evil.example"}) {
            HttpResponse<String> in = signIn(ADMIN, next, null);
            assertThat(in.headers().firstValue("Location").orElseThrow()).as(next).isEqualTo("/");
        }
    }

    @Test
    void theCookieAloneChangesNothing_aReadSessionCannotAct_andSignOutEndsTheSession() throws Exception {
        HttpResponse<String> admin = signIn(ADMIN, "/", null);
        String csrf = csrfOf(admin);
        HttpRequest.Builder noToken = serve.request("/v1/dead-letters/1-1?topic=runs").header("Cookie", cookieOf(admin))
                .DELETE();
        assertThat(serve.send(noToken).statusCode()).isEqualTo(401);
        HttpRequest.Builder wrongToken = serve.request("/v1/dead-letters/1-1?topic=runs")
                .header("Cookie", cookieOf(admin)).header(BrowserSessions.CSRF_HEADER, "x" + csrf).DELETE();
        assertThat(serve.send(wrongToken).statusCode()).isEqualTo(401);
        HttpRequest.Builder withToken = serve.request("/v1/dead-letters/1-1?topic=runs")
                .header("Cookie", cookieOf(admin)).header(BrowserSessions.CSRF_HEADER, csrf).DELETE();
        assertThat(serve.send(withToken).statusCode()).as("authenticated: no such dead letter").isEqualTo(404);

        HttpResponse<String> reader = signIn(READER, "/", null);
        HttpResponse<String> refused = serve.send(serve.request("/v1/dead-letters/1-1?topic=runs")
                .header("Cookie", cookieOf(reader)).header(BrowserSessions.CSRF_HEADER, csrfOf(reader)).DELETE());
        assertThat(refused.statusCode()).isEqualTo(403);

        HttpResponse<String> out = serve.send(serve.request("/logout").header("Cookie", cookieOf(admin))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("csrf=" + csrf)));
        assertThat(out.statusCode()).isEqualTo(303);
        assertThat(serve.send(serve.request("/").header("Cookie", cookieOf(admin))).statusCode()).isEqualTo(303);
        assertThat(serve.send(serve.request("/").header("Cookie", cookieOf(reader))).statusCode()).isEqualTo(200);
    }

    @Test
    void signOutEndsTheSessionsEventStreams_andABearerTokensStreamGoesOn() throws Exception {
        String body = "{\"session_id\":\"s\",\"user_id\":\"u\",\"input\":\"later\",\"delay\":\"PT1H\"}";
        HttpResponse<String> created = serve.send(serve.request("/v1/runs").header("Authorization", "Bearer " + ADMIN)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)));
        String run = TestServe.json(created).get("run_id").asText();
        HttpResponse<String> session = signIn(ADMIN, "/", null);
        String csrf = csrfOf(session);
        HttpResponse<java.io.InputStream> bySession = serve.http.send(serve.request("/v1/runs/" + run + "/events")
                .header("Cookie", cookieOf(session)).build(), HttpResponse.BodyHandlers.ofInputStream());
        HttpResponse<java.io.InputStream> byToken = serve.http.send(serve.request("/v1/runs/" + run + "/events")
                .header("Authorization", "Bearer " + ADMIN).build(), HttpResponse.BodyHandlers.ofInputStream());
        try (java.io.InputStream sessionStream = bySession.body(); java.io.InputStream tokenStream = byToken.body()) {
            assertThat(new ServerSentEvents(sessionStream).next(WAIT)).contains("\"status\":\"pending\"");
            ServerSentEvents tokenEvents = new ServerSentEvents(tokenStream);
            assertThat(tokenEvents.next(WAIT)).contains("\"status\":\"pending\"");

            assertThat(serve.send(serve.request("/logout").header("Cookie", cookieOf(session))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString("csrf=" + csrf))).statusCode()).isEqualTo(303);
            // The session's stream ends (its run still pending, an hour from due); the token's goes on.
            java.util.concurrent.CompletableFuture<Void> end = java.util.concurrent.CompletableFuture.runAsync(
                    () -> drain(sessionStream));
            Wait.until("the signed-out session's stream ended", WAIT, end::isDone);
            assertThat(status(run)).isEqualTo("pending");
            serve.send(serve.request("/v1/runs/" + run + "/cancel").header("Authorization", "Bearer " + ADMIN)
                    .POST(HttpRequest.BodyPublishers.noBody()));
            assertThat(tokenEvents.next(WAIT)).as("the token's stream still follows the run")
                    .contains("\"status\":\"cancelled\"");
        }
    }

    /** Reads what is left of a stream, returning when it ends. */
    private static void drain(java.io.InputStream in) {
        try {
            in.readAllBytes();
        } catch (java.io.IOException ended) {
            // closed: ended too
        }
    }

    @Test
    void textFromTheRunIsEscaped_andPurgeDeletesTheDeadLetterLeavingTheRunFailed() throws Exception {
        String input = "gated <img src=x onerror=alert(1)>";
        HttpResponse<String> submitted = serve.send(serve.request("/v1/runs").header("Authorization", "Bearer " + ADMIN)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                        "{\"session_id\":\"s\",\"user_id\":\"u\",\"input\":" + Json.write(input) + "}")));
        String run = TestServe.json(submitted).get("run_id").asText();
        Wait.until("the run failed", WAIT, () -> status(run).equals("failed"));
        String dead = TestServe.json(serve.get("/v1/runs/" + run, ADMIN)).get("dead_letter_id").asText();

        HttpResponse<String> in = signIn(READER, "/", null);
        String page = serve.send(serve.request("/dead-letters?topic=runs").header("Cookie", cookieOf(in))).body();
        assertThat(page).contains("the gate is shut for gated &lt;img src").doesNotContain("<img src");
        String runPage = serve.send(serve.request("/runs/" + run).header("Cookie", cookieOf(in))).body();
        assertThat(runPage).contains("gated &lt;img src").doesNotContain("<img src");
        // Its last progress report, as a worker writes it: the list shows how far, the run's page the details too.
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(dev.runbus.testkit.TestServers.databaseUrl());
             java.sql.Statement st = c.createStatement()) {
            st.execute("UPDATE " + serve.schema + ".runs SET progress_percent = 40, progress_details = '<b>step 4</b>',"
                    + " progress_at = now() WHERE id = '" + run + "'");
        }
        String list = serve.send(serve.request("/runs?user=u").header("Cookie", cookieOf(in))).body();
        assertThat(list).contains("<td class=\"progress\">40 % (").doesNotContain("step 4");
        assertThat(serve.send(serve.request("/runs/" + run).header("Cookie", cookieOf(in))).body())
                .contains("40 %, &lt;b&gt;step 4&lt;/b&gt; (").doesNotContain("<b>step 4");

        HttpRequest.Builder purge = serve.request("/v1/dead-letters/" + dead + "?topic=runs")
                .header("Authorization", "Bearer " + ADMIN).DELETE();
        assertThat(serve.send(purge).statusCode()).isEqualTo(204);
        assertThat(serve.send(purge).statusCode()).isEqualTo(404);
        assertThat(serve.server.infrastructure().bus().deadLetters().get("runs", dead)).isEmpty();
        assertThat(status(run)).isEqualTo("failed");
    }

    @Test
    void everyPageNeedsTheReadScope() {
        for (HttpApi.Route r : serve.server.pageRoutes()) {
            boolean open = r.path().equals("/assets/{file}") || r.path().equals("/login") || r.path().equals("/logout");
            assertThat(r.scope()).as(r.method() + " " + r.path()).isEqualTo(open ? null : Scope.READ);
        }
        assertThat(serve.server.pageRoutes()).extracting(HttpApi.Route::path)
                .contains("/", "/topics/{topic}", "/dead-letters", "/scheduled", "/runs", "/runs/{id}");
    }

    private static HttpResponse<String> signIn(String token, String next, String origin) throws Exception {
        HttpRequest.Builder b = serve.request("/login").header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("token=" + URLEncoder.encode(token, StandardCharsets.UTF_8)
                        + "&next=" + URLEncoder.encode(next, StandardCharsets.UTF_8)));
        if (origin != null) {
            b.header("Origin", origin);
        }
        return serve.send(b);
    }

    private static String cookieOf(HttpResponse<String> signIn) {
        String setCookie = signIn.headers().firstValue("Set-Cookie").orElseThrow();
        return setCookie.substring(0, setCookie.indexOf(';'));
    }

    /** The CSRF token a page of the session carries in its meta tag. */
    private static String csrfOf(HttpResponse<String> signIn) throws Exception {
        String page = serve.send(serve.request("/").header("Cookie", cookieOf(signIn))).body();
        Matcher m = Pattern.compile("name=\"csrf-token\" content=\"([^\"]+)\"").matcher(page);
        assertThat(m.find()).as("a CSRF token in the page").isTrue();
        return m.group(1);
    }

    private static String status(String run) {
        try {
            return TestServe.json(serve.get("/v1/runs/" + run, ADMIN)).get("status").asText();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
