package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.runs.Run;
import dev.runbus.testkit.Wait;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A run's {@code error} reaches read tokens bounded and printable: at most 2,000 characters, no control characters
 * but newline and tab, whether the handler's text was stored by this version or before it.
 */
class RunErrorOverHttpTest {

    static TestServe serve;

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of(Setting.HANDLER, NoisyFailureHandler.class.getName(),
                Setting.MAX_DELIVERIES, "1"));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void aHandlersFailureTextIsCappedAndStripped() throws Exception {
        String id = TestServe.json(serve.submit("anything", null)).get("run_id").asText();
        JsonNode run = failed(id);
        // A failed run's text is its dead letter's reason, which the bus cuts at 1,000 characters already.
        assertBounded(run.get("error").asText());
        assertThat(run.get("error").asText()).startsWith("java.lang.IllegalStateException: ]0;owned[2J\nsecond line\t");
    }

    @Test
    void aHandlerOfItsOwnIsNotWarnedAbout() {
        assertThat(serve.server.handlerWarning()).isEmpty();
    }

    @Test
    void aTextStoredBeforeTheRuleIsShownByIt() throws Exception {
        String id = TestServe.json(serve.submit("old row", null)).get("run_id").asText();
        failed(id);
        try (Connection c = DriverManager.getConnection(DemoEndToEndTest.DATABASE);
             PreparedStatement ps = c.prepareStatement("UPDATE " + serve.schema + ".runs SET error = ? WHERE id = ?")) {
            ps.setString(1, "\u001b[31mold\u001b[0m\r" + "z".repeat(9_000));
            ps.setObject(2, UUID.fromString(id));
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        String error = TestServe.json(serve.get("/v1/runs/" + id, null)).get("error").asText();
        assertBounded(error);
        assertThat(error).hasSize(Run.MAX_ERROR_LENGTH).startsWith("[31mold[0mzzz").endsWith("z…");
    }

    static JsonNode failed(String id) {
        return Wait.until("run " + id + " failed", Duration.ofSeconds(30), () -> {
            try {
                return TestServe.json(serve.get("/v1/runs/" + id, null));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, r -> r.get("status").asText().equals("failed"));
    }

    static void assertBounded(String error) {
        assertThat(error.length()).isLessThanOrEqualTo(Run.MAX_ERROR_LENGTH);
        assertThat(error.chars().filter(c -> Character.isISOControl(c) && c != '\n' && c != '\t')).isEmpty();
    }
}
