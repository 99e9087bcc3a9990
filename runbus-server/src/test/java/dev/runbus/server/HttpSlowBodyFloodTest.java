package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import dev.runbus.testkit.Wait;
import java.net.http.HttpResponse;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The flood the in-flight caps are for, at their defaults: 264 submissions from 8 tokens whose bodies arrive a byte
 * at a time, more than Jetty's 250 threads. Without the caps they held every thread and even {@code /health}
 * went unanswered; with them, 128 are in flight, the rest are refused at once with 503, {@code /health} answers,
 * and everyone is served again once the slow clients leave.
 */
class HttpSlowBodyFloodTest {

    static final int TOKENS = 8;
    static final int PER_TOKEN = 33;
    static final int OVERALL = 128;
    static TestServe serve;
    static final List<String> flood = new ArrayList<>();
    static String other = ApiTokens.generate(new SecureRandom());

    @BeforeAll
    static void start() {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < TOKENS; i++) {
            String t = ApiTokens.generate(new SecureRandom());
            flood.add(t);
            lines.add(line("flood" + i, t));
        }
        lines.add(line("other", other));
        serve = TestServe.start(Map.of(Setting.API_TOKENS, String.join(";", lines), Setting.REQUEST_TIMEOUT, "60s",
                Setting.IDLE_TIMEOUT, "60s"));
    }

    private static String line(String name, String token) {
        return new ApiToken(name, Set.of(Scope.SUBMIT, Scope.READ), ApiTokens.sha256(token)).line();
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    private static int status(String path, String token) {
        try {
            HttpResponse<String> r = serve.send(serve.request(path).timeout(Duration.ofSeconds(5))
                    .header("Authorization", "Bearer " + (token == null ? "-" : token)));
            return r.statusCode();
        } catch (Exception e) {
            return -1; // no answer in time
        }
    }

    @Test
    void moreSlowBodiesThanThreadsAreRefusedPastTheCapsAndTheServerStaysUp() throws Exception {
        List<SlowClient> slow = new ArrayList<>();
        try {
            for (String token : flood) {
                for (int i = 0; i < PER_TOKEN; i++) {
                    slow.add(new SlowClient(serve.server.port(), null, "/v1/runs", "Authorization: Bearer " + token));
                }
            }
            int total = TOKENS * PER_TOKEN;
            Wait.until("all but " + OVERALL + " slow submissions refused", Duration.ofSeconds(30),
                    () -> slow.stream().filter(s -> s.answer().startsWith("HTTP/1.1 503")).count() == total - OVERALL);
            assertThat(slow.stream().filter(s -> s.answer().isEmpty()).count()).isEqualTo(OVERALL);
            assertThat(slow.stream().filter(s -> !s.answer().isEmpty())).allSatisfy(s ->
                    assertThat(s.answer()).startsWith("HTTP/1.1 503").contains("Retry-After: 1"));
            assertThat(status("/health", null)).isEqualTo(200);
            assertThat(status("/v1/streams", other)).isEqualTo(503);

            slow.forEach(SlowClient::leave);
            Wait.until("the server answered every slow client that left", Duration.ofSeconds(30),
                    () -> slow.stream().noneMatch(s -> s.answer().isEmpty()));
            assertThat(status("/v1/streams", other)).isEqualTo(200);
            assertThat(serve.submit("after the flood", flood.get(0)).statusCode()).isEqualTo(201);
        } finally {
            slow.forEach(SlowClient::close);
        }
    }
}
