package dev.runbus.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import dev.runbus.runs.StoredReply;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A deployment's own handler, outside runbus's classpath, run by {@code runbus worker} in a process of its own:
 * found through {@code --handler-path} (this module's classes folder), and refused by name without it.
 */
class OwnHandlerTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Path CLASSES = Path.of("target", "classes").toAbsolutePath();
    private final RedisTarget redis = RedisTarget.local();
    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final String prefix = "own-handler-" + suffix;
    private final String schema = "own_handler_" + suffix;

    @Test
    void workerRunsAHandlerFromHandlerPath_andNamesTheFlagWhenTheClassIsNotFound() throws Exception {
        Process without = worker(false);
        assertThat(without.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String err = new String(without.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(without.exitValue()).as(err).isEqualTo(2);
        assertThat(err).contains("--handler dev.runbus.examples.ShoutHandler: no such class on the classpath")
                .contains("--handler-path");

        Process worker = worker(true);
        HikariConfig db = new HikariConfig();
        db.setJdbcUrl(TestServers.databaseUrl());
        try (HikariDataSource ds = new HikariDataSource(db);
             Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).build());
             Runs runs = Runs.create(bus, ds, RunsConfig.builder().schema(schema).build())) {
            UUID id = runs.submit(NewRun.of("s", "u", "hello from a handler jar")).runId();
            Wait.until("the worker's handler finished the run", WAIT,
                    () -> runs.get(id).orElseThrow().status() == RunStatus.DONE || !worker.isAlive());
            assertThat(worker.isAlive()).as("the worker is running").isTrue();
            assertThat(runs.replies(id)).extracting(StoredReply::content).containsExactly("HELLO FROM A HANDLER JAR");
        } finally {
            worker.destroy(); // SIGTERM: a graceful stop
            assertThat(worker.waitFor(60, TimeUnit.SECONDS)).isTrue();
            redis.deleteKeys(prefix);
            ExampleKeys.dropSchema(TestServers.databaseUrl(), schema);
        }
    }

    /** {@code runbus worker} in a JVM whose classpath lacks this module's classes. */
    private Process worker(boolean withHandlerPath) throws Exception {
        String classpath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !Path.of(e).toAbsolutePath().startsWith(Path.of("target").toAbsolutePath()))
                .collect(Collectors.joining(File.pathSeparator));
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", classpath,
                "dev.runbus.server.RunbusCli", "worker", "--redis-url", redis.uri(),
                "--database-url", TestServers.databaseUrl(), "--schema", schema, "--key-prefix", prefix,
                "--consumer", "own-handler", "--handler", "dev.runbus.examples.ShoutHandler"));
        if (withHandlerPath) {
            assertThat(Files.isDirectory(CLASSES)).isTrue();
            command.addAll(List.of("--handler-path", CLASSES.toString()));
        }
        ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().keySet().removeIf(k -> k.startsWith("RUNBUS_"));
        if (withHandlerPath) {
            pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        }
        return pb.start();
    }
}
