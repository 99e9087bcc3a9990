package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code serve --log-format json}: every line the process writes to stderr, from start to a graceful stop, is one
 * JSON object with time, level, logger and message; lines after the worker started name its topic, group and
 * consumer, and the handler's own line names the run it executes.
 */
class JsonLogsTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();
    private final String schema = "jsonlog_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String prefix = "rbjsonlog-" + UUID.randomUUID().toString().substring(0, 8);

    @Test
    void everyStderrLineOfAServeRunIsAJsonObject_andTheHandlersLineNamesItsRun() throws Exception {
        Path out = Files.createTempFile("runbus-serve", ".out");
        Path err = Files.createTempFile("runbus-serve", ".err");
        ProcessBuilder pb = Hermetic.child(new ProcessBuilder(Hermetic.runbus("serve", "--log-format", "json", "--port", "0", "--host", "127.0.0.1",
                "--redis-url", RedisTarget.local().uri(), "--database-url", DemoEndToEndTest.DATABASE,
                "--schema", schema, "--key-prefix", prefix, "--handler", LoggingHandler.class.getName(),
                "--consumer", "json-1", "--shutdown-timeout", "10s")))
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().put("RUNBUS_LOG_LEVEL", "info");
        Process serve = pb.start();
        try {
            String ready = Wait.until("serve ready", WAIT, () -> read(out).stream()
                    .filter(l -> l.startsWith("runbus serving on")).findFirst().orElse(null), l -> l != null);
            Matcher port = Pattern.compile(":(\\d+) \\(").matcher(ready);
            assertThat(port.find()).isTrue();
            HttpResponse<String> submitted = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                    "http://127.0.0.1:" + port.group(1) + "/v1/runs")).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"session_id\":\"s\",\"user_id\":\"u\","
                            + "\"input\":\"hello json\"}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(submitted.statusCode()).as(submitted.body()).isEqualTo(201);
            String runId = JSON.readTree(submitted.body()).get("run_id").asText();
            Wait.until("the handler's line", WAIT, () -> String.join("\n", read(err)).contains("handling input hello json"));
            serve.destroy(); // SIGTERM: stops gracefully, logging as it goes
            assertThat(serve.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(serve.exitValue()).isZero();

            List<JsonNode> lines = new ArrayList<>();
            for (String line : Files.readAllLines(err)) {
                JsonNode node = JSON.readTree(line); // throws on a line that is not JSON
                assertThat(node.isObject()).as(line).isTrue();
                for (String field : new String[] {"time", "level", "logger", "thread", "message"}) {
                    assertThat(node.hasNonNull(field)).as(field + " in " + line).isTrue();
                }
                lines.add(node);
            }
            JsonNode handled = lines.stream().filter(n -> n.get("message").asText().equals("handling input hello json"))
                    .findFirst().orElseThrow();
            assertThat(handled.get("level").asText()).isEqualTo("INFO");
            assertThat(handled.get("logger").asText()).isEqualTo(LoggingHandler.class.getName());
            assertThat(handled.get("run_id").asText()).isEqualTo(runId);
            assertThat(handled.get("message_id").asText()).isEqualTo(runId);
            assertThat(handled.get("topic").asText()).isEqualTo("runs");
            assertThat(handled.get("group").asText()).isEqualTo("run-workers");
            assertThat(handled.get("consumer").asText()).isEqualTo("json-1");
            assertThat(lines).as("lines besides the handler's (start and stop)").hasSizeGreaterThan(1);
        } finally {
            serve.destroyForcibly();
            RedisTarget.local().deleteKeys(prefix);
            TestServers.dropSchema(schema);
        }
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
