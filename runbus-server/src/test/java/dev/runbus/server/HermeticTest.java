package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The developer's {@code RUNBUS_*} variables and {@code ./runbus.properties} never reach a test's settings.
 * No servers needed.
 */
class HermeticTest {

    /**
     * A child JVM gets a RUNBUS_* variable and a config file in its working directory, as a developer who
     * followed the README has. The command as the tests run it sees neither; the same command reading the
     * process's own environment sees both, so the probe would catch a leak.
     */
    @Test
    void developersVariablesAndConfigFileDoNotReachTheCommandInTests(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve(Environment.DEFAULT_CONFIG_FILE), "schema=leaked_schema\n");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder b = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                ConfigProbe.class.getName()).directory(dir.toFile()).redirectErrorStream(true);
        b.environment().keySet().removeIf(name -> name.startsWith("RUNBUS_"));
        b.environment().putAll(Map.of("RUNBUS_PORT", "1234", "RUNBUS_TOPIC", "leaked-topic"));
        Process p = b.start();
        List<String> lines;
        try {
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            lines = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines()
                    .filter(l -> l.startsWith("{")).toList();
        } finally {
            p.destroyForcibly();
        }
        assertThat(lines).hasSize(2);

        JsonNode inTests = Json.MAPPER.readTree(lines.get(0));
        for (String key : List.of("port", "topic", "schema")) {
            assertThat(inTests.get(key).get("source").asText()).as(key).isEqualTo("default");
        }
        assertThat(inTests.get("schema").get("value").asText()).isEqualTo("runbus");

        JsonNode asUsers = Json.MAPPER.readTree(lines.get(1));
        assertThat(asUsers.get("port").get("value").asText()).isEqualTo("1234");
        assertThat(asUsers.get("topic").get("source").asText()).isEqualTo("env");
        assertThat(asUsers.get("schema").get("value").asText()).isEqualTo("leaked_schema");
        assertThat(asUsers.get("schema").get("source").asText()).isEqualTo("file");
    }

    @Test
    void theConfigFileIsLookedForInTheGivenWorkingDirectory(@TempDir Path dir) throws IOException {
        assertThat(new Environment(Map.of(), dir).configFile(null)).isNull();
        Path local = Files.writeString(dir.resolve(Environment.DEFAULT_CONFIG_FILE), "topic=t\n");
        assertThat(new Environment(Map.of(), dir).configFile(null)).isEqualTo(local);
        assertThat(new Environment(Map.of("RUNBUS_CONFIG", "other.properties"), dir).configFile(null))
                .isEqualTo(dir.resolve("other.properties"));
        assertThat(new Environment(Map.of("RUNBUS_CONFIG", " "), dir).configFile(null)).isEqualTo(local);
        assertThat(new Environment(Map.of(), dir).configFile(Path.of("given.properties")))
                .isEqualTo(dir.resolve("given.properties"));
        Cli c = Cli.run(new Environment(Map.of(), dir), "config", "--json");
        assertThat(c.exitCode).as(c.err).isZero();
        assertThat(c.out).contains("\"topic\":{\"value\":\"t\",\"source\":\"file\"}");
    }

    @Test
    void aChildProcessGetsTheSettingsAndNoOtherRunbusVariable() {
        Environment parent = new Environment(Map.of("RUNBUS_TOPIC", "mine", "RUNBUS_CONFIG", "x.properties",
                "RUNBUS_LOG_LEVEL", "debug", "HOME", "/home/dev"), Path.of("/tmp"));
        Settings settings = Settings.resolve(Map.of(Setting.SCHEMA, "s1"), Map.of(), null);
        Map<String, String> child = parent.forChild(settings);
        assertThat(child).containsEntry("RUNBUS_SCHEMA", "s1").containsEntry("RUNBUS_TOPIC", "runs")
                .containsEntry("RUNBUS_LOG_LEVEL", "debug").containsEntry("HOME", "/home/dev")
                .doesNotContainKey("RUNBUS_CONFIG").doesNotContainKey("RUNBUS_REDIS_URL");
    }
}
