package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Without tokens the caps on requests in flight count per client address: slow clients from one loopback address
 * (127.0.0.2) fill its places, and another address (127.0.0.3) is still served.
 */
class HttpInFlightNoTokensTest {

    static final int PER_ADDRESS = 2;
    static TestServe serve;

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of(Setting.MAX_IN_FLIGHT_PER_CALLER, Integer.toString(PER_ADDRESS),
                Setting.MAX_IN_FLIGHT, "10", Setting.READ_RATE, "0", Setting.REQUEST_TIMEOUT, "60s",
                Setting.IDLE_TIMEOUT, "60s"));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    private static RawHttp streams(String from) {
        try {
            return RawHttp.send(serve.server.port(), from, "GET", "/v1/streams");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void oneAddressAtItsCapLeavesOthersServed() throws Exception {
        List<SlowClient> slow = new ArrayList<>();
        try {
            for (int i = 0; i < PER_ADDRESS; i++) {
                slow.add(new SlowClient(serve.server.port(), "127.0.0.2", "/v1/runs"));
            }
            // The probe holds one of 127.0.0.2's places while it runs: a slow client refused meanwhile is sent again.
            RawHttp refused = Wait.until("127.0.0.2 is at its cap", Duration.ofSeconds(15), () -> {
                for (int i = 0; i < slow.size(); i++) {
                    if (!slow.get(i).answer().isEmpty()) {
                        try {
                            slow.add(i, new SlowClient(serve.server.port(), "127.0.0.2", "/v1/runs"));
                            slow.remove(i + 1).close();
                        } catch (java.io.IOException e) {
                            throw new IllegalStateException(e);
                        }
                    }
                }
                return streams("127.0.0.2");
            }, r -> r.status() == 503);
            assertThat(refused.header("Retry-After")).isEqualTo("1");
            assertThat(refused.json().get("error").asText()).contains("in flight for this caller");
            assertThat(streams("127.0.0.3").status()).isEqualTo(200);
            slow.forEach(SlowClient::leave);
            Wait.until("the server answered the slow clients that left", Duration.ofSeconds(15),
                    () -> slow.stream().noneMatch(s -> s.answer().isEmpty()));
            assertThat(streams("127.0.0.2").status()).isEqualTo(200);
        } finally {
            slow.forEach(SlowClient::close);
        }
    }
}
