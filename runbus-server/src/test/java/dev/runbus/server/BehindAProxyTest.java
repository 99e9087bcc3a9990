package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.PublicUrl;
import dev.runbus.server.http.Scope;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A serve behind a proxy that terminates TLS and rewrites {@code Host} ({@code --public-url}): the dashboard's
 * sign-in from the public origin is accepted, its cookie is {@code Secure}, every response says
 * {@code Strict-Transport-Security}; another origin is still refused.
 */
class BehindAProxyTest {

    static final String TOKEN = ApiTokens.generate(new SecureRandom());
    static TestServe serve;

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of(Setting.API_TOKENS, new ApiToken("operator", Set.of(Scope.READ),
                ApiTokens.sha256(TOKEN)).line(), Setting.PUBLIC_URL, "https://runbus.example.com/"));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void aSignInFromThePublicOriginGetsASecureCookieAndHsts() throws Exception {
        RawHttp r = signIn("https://runbus.example.com");
        assertThat(r.status()).as(r.body()).isEqualTo(303);
        assertThat(r.header("Set-Cookie")).contains("HttpOnly").contains("SameSite=Strict").contains("; Secure");
        assertThat(r.header("Strict-Transport-Security")).isEqualTo("max-age=31536000");
        assertThat(RawHttp.send(serve.server.port(), null, "GET", "/health").header("Strict-Transport-Security"))
                .isEqualTo("max-age=31536000");
    }

    @Test
    void aSignInFromAnotherOriginIsStillRefused() throws Exception {
        assertThat(signIn("https://evil.example.com").status()).isEqualTo(403);
        assertThat(signIn("http://runbus.example.com").status()).as("the public host over plain HTTP").isEqualTo(403);
    }

    @Test
    void theSettingTakesAnOriginOnly() {
        assertThat(PublicUrl.parse("https://Runbus.Example.com:443/").origin()).isEqualTo("https://runbus.example.com");
        assertThat(PublicUrl.parse("http://10.0.0.5:8080").origin()).isEqualTo("http://10.0.0.5:8080");
        assertThatThrownBy(() -> PublicUrl.parse("runbus.example.com")).hasMessageContaining("--public-url")
                .hasMessageContaining("https://");
        assertThatThrownBy(() -> PublicUrl.parse("https://runbus.example.com/runbus")).hasMessageContaining("path");
        assertThatThrownBy(() -> PublicUrl.parse("https://user@runbus.example.com")).hasMessageContaining("user");
    }

    /** A sign-in as the proxy forwards it: the browser's Origin, serve's own address as Host. */
    private static RawHttp signIn(String origin) throws Exception {
        String form = "token=" + URLEncoder.encode(TOKEN, StandardCharsets.UTF_8) + "&next=%2F";
        return RawHttp.post(serve.server.port(), "/login", "application/x-www-form-urlencoded", form,
                "Origin: " + origin);
    }
}
