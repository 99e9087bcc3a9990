package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.testing.RedisTarget;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code runbus demo} end to end, on the embedded servers and on the machine's real ones. */
@Tag("slow")
class DemoEndToEndTest {

    static final String DATABASE = System.getenv().getOrDefault("RUNBUS_TEST_DATABASE_URL",
            "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");

    private static JsonNode summary(Cli c) throws Exception {
        return Json.MAPPER.readTree(c.lastLine());
    }

    private static void assertConverged(JsonNode s, int runs) {
        assertThat(s.get("runs").asLong()).isEqualTo(runs);
        assertThat(s.get("done").asLong() + s.get("failed").asLong()).isEqualTo(runs);
        assertThat(s.get("failed").asLong()).isEqualTo(s.get("dead_lettered").asLong());
        assertThat(s.get("duplicate_replies").asLong()).isZero();
        assertThat(s.get("duplicate_submissions_absorbed").asLong()).isPositive();
        assertThat(s.get("redeliveries").asLong()).isPositive(); // flaky and poison inputs were retried
    }

    @Test
    void demoOnEmbeddedServers() throws Exception {
        Cli c = Cli.run("demo", "--runs", "300", "--poison-rate", "0.02", "--no-progress");
        assertThat(c.exitCode).as(c.err).isZero();
        assertThat(c.out).contains("started embedded Redis").contains("started embedded PostgreSQL");
        JsonNode s = summary(c);
        assertConverged(s, 300);
        assertThat(s.get("failed").asLong()).isPositive();
    }

    @Test
    void demoOnRealServersWithAWorkerKilled() throws Exception {
        Cli c = Cli.run("demo", "--runs", "400", "--kill-worker", "--no-progress",
                "--redis-url", RedisTarget.local().uri(), "--database-url", DATABASE);
        assertThat(c.exitCode).as(c.err).isZero();
        assertThat(c.out).doesNotContain("embedded").contains("killed worker demo-victim");
        assertConverged(summary(c), 400);
        // The demo's own schema and keys are gone.
        assertThat(RedisTarget.local().redis().keys("runbus-demo-*")).isEmpty();
    }
}
