package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A serve and a worker on one host get different default consumer names (they must not share a pending list),
 * each stable across restarts; {@code --consumer} wins.
 */
class ConsumerNamesTest {

    @Test
    void serveAndWorkerDefaultsDifferByRole_andAGivenNameWins() {
        try (TestServe serve = TestServe.start(Map.of())) {
            assertThat(serve.server.runs().config().consumer()).isEqualTo(RunsFactory.defaultConsumer("serve-0"))
                    .endsWith("-serve-0");
        }
        assertThat(RunsFactory.defaultConsumer("worker")).endsWith("-worker")
                .isNotEqualTo(RunsFactory.defaultConsumer("serve-8080"))
                .isEqualTo(RunsFactory.defaultConsumer("worker"));
        try (TestServe named = TestServe.start(Map.of(Setting.CONSUMER, "api-1"))) {
            assertThat(named.server.runs().config().consumer()).isEqualTo("api-1");
        }
    }
}
