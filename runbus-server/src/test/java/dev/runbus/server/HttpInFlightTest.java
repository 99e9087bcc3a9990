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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Slow bodies cannot take the server's threads: requests in flight are capped per token and in all, the excess
 * answered 503 with Retry-After at once, other tokens served while one is at its cap, and every place given back
 * when the slow clients go. Real slow clients ({@link SlowClient}: headers, then a body one byte at a time) against
 * a real serve; the request timeout is long, so that only the caps can refuse them.
 */
class HttpInFlightTest {

    static final int PER_CALLER = 3;
    static final int OVERALL = 5;
    static TestServe serve;
    static String a = ApiTokens.generate(new SecureRandom());
    static String b = ApiTokens.generate(new SecureRandom());
    static String c = ApiTokens.generate(new SecureRandom());
    final List<SlowClient> slow = new ArrayList<>();

    @BeforeAll
    static void start() {
        String lines = String.join(";", line("a", a), line("b", b), line("c", c));
        serve = TestServe.start(Map.of(Setting.API_TOKENS, lines,
                Setting.MAX_IN_FLIGHT_PER_CALLER, Integer.toString(PER_CALLER),
                Setting.MAX_IN_FLIGHT, Integer.toString(OVERALL), Setting.READ_RATE, "0",
                Setting.REQUEST_TIMEOUT, "60s", Setting.IDLE_TIMEOUT, "60s"));
    }

    private static String line(String name, String token) {
        return new ApiToken(name, Set.of(Scope.SUBMIT, Scope.READ), ApiTokens.sha256(token)).line();
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    /** The slow clients leave, and the server has answered each: none of their requests is in flight any more. */
    @AfterEach
    void slowClientsLeave() {
        leave(slow);
        slow.forEach(SlowClient::close);
        slow.clear();
    }

    private static void leave(List<SlowClient> clients) {
        clients.forEach(SlowClient::leave);
        Wait.until("the server answered every slow client that left", Duration.ofSeconds(15),
                () -> clients.stream().noneMatch(s -> s.answer().isEmpty()));
    }

    private SlowClient slowSubmit(String token) throws Exception {
        SlowClient s = new SlowClient(serve.server.port(), null, "/v1/runs", "Authorization: Bearer " + token);
        slow.add(s);
        return s;
    }

    /** Replaces each of {@code clients} the server answered (refused) by a new slow submission of {@code token}. */
    private void resend(List<SlowClient> clients, String token) {
        for (int i = 0; i < clients.size(); i++) {
            if (!clients.get(i).answer().isEmpty()) {
                try {
                    clients.set(i, slowSubmit(token));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    private static int status(String token) {
        try {
            return serve.get("/v1/streams", token).statusCode();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void slowBodiesPastTheCallersCapAnswer503AndOtherCallersAreServed() throws Exception {
        List<SlowClient> mine = new ArrayList<>();
        for (int i = 0; i < PER_CALLER + 2; i++) {
            mine.add(slowSubmit(a));
        }
        // The two past the cap are answered at once, while their bodies are still arriving; the others wait.
        Wait.until("two of a's slow submissions are refused", Duration.ofSeconds(15),
                () -> mine.stream().filter(s -> s.answer().startsWith("HTTP/1.1 503")).count() == 2);
        for (SlowClient s : mine) {
            String answer = s.answer();
            if (!answer.isEmpty()) {
                assertThat(answer).startsWith("HTTP/1.1 503").contains("Retry-After: 1")
                        .contains("too many requests in flight for this caller").contains("\"request_id\"");
            }
        }
        assertThat(mine.stream().filter(s -> s.answer().isEmpty()).count()).isEqualTo(PER_CALLER);

        HttpResponse<String> refused = serve.get("/v1/streams", a);
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(TestServe.json(refused).get("error").asText()).contains("in flight for this caller");

        // Another token is served, reads and submissions alike.
        assertThat(status(b)).isEqualTo(200);
        assertThat(serve.submit("while a is at its cap", b).statusCode()).isEqualTo(201);

        // a's slow clients go: every place comes back.
        leave(mine);
        List<SlowClient> again = new ArrayList<>();
        for (int i = 0; i < PER_CALLER; i++) {
            again.add(slowSubmit(a));
        }
        // a's probe holds one of a's places while it runs: a slow client refused meanwhile is sent again.
        Wait.until("a is at its cap again, with new slow clients", Duration.ofSeconds(15), () -> {
            resend(again, a);
            return status(a) == 503;
        });
        leave(slow);
        assertThat(status(a)).isEqualTo(200);
        assertThat(serve.submit("after the slow clients went", a).statusCode()).isEqualTo(201);
    }

    @Test
    void theOverallCapRefusesEveryCallerButHealthStillAnswers() throws Exception {
        List<SlowClient> filling = new ArrayList<>();
        for (int i = 0; i < OVERALL; i++) {
            filling.add(slowSubmit(i < PER_CALLER ? a : b));
        }
        // c's probe is a request in flight too: a slow client that arrived while a probe held a place was refused,
        // and is sent again, until the slow clients hold every place and the probe is the one refused.
        HttpResponse<String> busy = Wait.until("c is refused: the slow clients hold every place",
                Duration.ofSeconds(15), () -> {
                    try {
                        resend(filling.subList(0, PER_CALLER), a);
                        resend(filling.subList(PER_CALLER, OVERALL), b);
                        return serve.get("/v1/streams", c);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, r -> r.statusCode() == 503);
        assertThat(busy.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(TestServe.json(busy).get("error").asText()).contains("the server is busy");
        assertThat(TestServe.json(busy).has("request_id")).isTrue();
        assertThat(serve.get("/health", null).statusCode()).isEqualTo(200);

        leave(slow);
        assertThat(status(c)).isEqualTo(200);
        assertThat(status(a)).isEqualTo(200);
        assertThat(status(b)).isEqualTo(200);
    }
}
