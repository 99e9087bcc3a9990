package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Without tokens the pages follow the API's rules without tokens: shown to this machine's own pages, refused to a
 * rebinding host name or another site's page, and there is no sign-in.
 */
class DashboardWithoutTokensTest {

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
    void pagesAreShownOnLoopbackAndRefusedToOtherSites() throws Exception {
        HttpResponse<String> overview = serve.send(serve.request("/"));
        assertThat(overview.statusCode()).isEqualTo(200);
        assertThat(overview.body()).contains("<h1>Overview</h1>").doesNotContain("signed in as");

        RawHttp rebound = RawHttp.send(serve.server.port(), null, "GET", "/runs", "Host: evil.example");
        assertThat(rebound.status()).isEqualTo(403);
        assertThat(rebound.body()).doesNotContain("<table");
        HttpResponse<String> crossSite = serve.send(serve.request("/dead-letters").header("Sec-Fetch-Site", "cross-site"));
        assertThat(crossSite.statusCode()).isEqualTo(403);
        assertThat(crossSite.body()).doesNotContain("<table");

        assertThat(serve.send(serve.request("/login")).statusCode()).isEqualTo(404);
        assertThat(serve.send(serve.request("/assets/dashboard.js")).statusCode()).isEqualTo(200);
        assertThat(serve.send(serve.request("/assets/..%2Fopenapi.json")).statusCode()).isEqualTo(404);
    }
}
