package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Settings are all checked before a command starts anything: a bad value costs no embedded server start, leaves
 * no process behind, and every bad value is named at once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StartupChecksTest {

    @Test
    void aBadSettingStopsServeAndDemoBeforeAnyServerProcessStarts() throws Exception {
        for (String command : new String[] {"serve", "demo", "worker"}) {
            Started started = watchingChildProcesses(() -> Cli.run(command, "--min-idle", "5x"));
            assertThat(started.cli.exitCode).as(command).isEqualTo(2);
            assertThat(started.cli.err).as(command).contains("--min-idle").contains("'5x'");
            assertThat(started.processes).as(command + ": processes started").isEmpty();
        }
    }

    /**
     * The default handler is the demo's echo: on servers of its own (URLs given) serve is a deployment, and must
     * say which handler runs; so must a worker. Refused before anything starts, naming the flag.
     */
    @Test
    void serveOnGivenServersNeedsAHandler() throws Exception {
        for (String[] urls : new String[][] {{"--redis-url", "redis://127.0.0.1:1"},
                {"--database-url", "jdbc:postgresql://127.0.0.1:1/x"},
                {"--redis-url", "redis://127.0.0.1:1", "--database-url", "jdbc:postgresql://127.0.0.1:1/x"}}) {
            List<String> args = new ArrayList<>(List.of("serve", "--port", "0"));
            args.addAll(List.of(urls));
            Started started = watchingChildProcesses(() -> Cli.run(args.toArray(String[]::new)));
            assertThat(started.cli.exitCode).as(started.cli.err).isEqualTo(2);
            assertThat(started.cli.err).contains("--handler").contains("DemoHandler").contains("echo");
            assertThat(started.processes).as("processes started").isEmpty();
        }
        // A worker runs on given servers only: the same rule.
        Started worker = watchingChildProcesses(() -> Cli.run("worker", "--redis-url", "redis://127.0.0.1:1",
                "--database-url", "jdbc:postgresql://127.0.0.1:1/x"));
        assertThat(worker.cli.exitCode).as(worker.cli.err).isEqualTo(2);
        assertThat(worker.cli.err).contains("--handler").contains("DemoHandler").contains("echo");
        assertThat(worker.processes).as("processes started").isEmpty();
        // Given through the environment counts as given.
        Cli env = Cli.run(new Environment(Map.of("RUNBUS_HANDLER", "no.such.Handler"),
                Hermetic.environment().workingDirectory()), "serve", "--port", "0", "--redis-url", "redis://127.0.0.1:1");
        assertThat(env.exitCode).isEqualTo(2);
        assertThat(env.err).contains("--handler no.such.Handler: no such class");
    }

    @Test
    void everyBadSettingIsNamedAtOnce() {
        Cli c = Cli.run(new Environment(Map.of("RUNBUS_TLS_CERT", "/nonexistent/cert.pem", "RUNBUS_TLS_KEY",
                "/nonexistent/key.pem", "RUNBUS_SUBMIT_RATE", "lots"), Hermetic.environment().workingDirectory()),
                "serve", "--min-idle", "5x", "--retry", "sometimes", "--concurrency", "0", "--ordered",
                "--redis-password-file", "/nonexistent/redis-password");
        assertThat(c.exitCode).isEqualTo(2);
        assertThat(c.err).contains("--min-idle").contains("--retry").contains("--concurrency must be at least 1")
                .contains("--submit-rate").contains("--tls-cert /nonexistent/cert.pem")
                .contains("--tls-key /nonexistent/key.pem").contains("--redis-password-file /nonexistent/redis-password")
                .doesNotContain("--ordered");
    }

    /**
     * What serve reads only once it has servers (the Redis URL and access, the password files, the database URL, the
     * runs layer's configuration) is checked with the rest, before an embedded Redis or PostgreSQL starts: each bad
     * value is refused naming what is wrong, and no server process was started for it.
     */
    @Test
    void settingsReadLateAreCheckedBeforeAnyServerProcessStarts(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Path empty = Files.writeString(dir.resolve("empty-password"), "\n");
        Path password = Files.writeString(dir.resolve("password"), "secret\n");
        Map<List<String>, String> cases = new LinkedHashMap<>();
        cases.put(List.of("--redis-scripts", "sometimes"), "--redis-scripts must be auto, eval or functions");
        cases.put(List.of("--redis-password-file", empty.toString()), "--redis-password-file " + empty + " is empty");
        cases.put(List.of("--database-password-file", empty.toString()),
                "--database-password-file " + empty + " is empty");
        cases.put(List.of("--redis-password-file", dir.toString()), "--redis-password-file " + dir + ": is a folder");
        cases.put(List.of("--redis-url", "127.0.0.1:6379"), "not a Redis URL runbus reads");
        cases.put(List.of("--database-url", "jdbc:postgresql://app:hunter2@127.0.0.1:5432/app"),
                "a JDBC URL takes the user and password as parameters");
        cases.put(List.of("--schema", "Not-An-Identifier"), "schema must be a lower-case SQL identifier");
        cases.put(List.of("--topic", "two words"), "topic must not contain whitespace");
        cases.put(List.of("--ordered", "--max-deliveries", "1"), "ordered runs need workerOptions.maxDeliveries");
        for (var c : cases.entrySet()) {
            List<String> args = new ArrayList<>(List.of("serve", "--port", "0"));
            args.addAll(c.getKey());
            Started started = watchingChildProcesses(() -> Cli.run(args.toArray(String[]::new)));
            assertThat(started.cli.exitCode).as("%s: %s", c.getKey(), started.cli.err).isEqualTo(2);
            assertThat(started.cli.err).as("%s", c.getKey()).contains(c.getValue()).doesNotContain("hunter2");
            assertThat(started.processes).as("%s: processes started", c.getKey()).isEmpty();
        }
        // A password given twice: in the environment and in a file.
        Started twice = watchingChildProcesses(() -> Cli.run(new Environment(Map.of("RUNBUS_REDIS_PASSWORD", "x"),
                Hermetic.environment().workingDirectory()), "serve", "--port", "0", "--redis-password-file",
                password.toString()));
        assertThat(twice.cli.exitCode).as(twice.cli.err).isEqualTo(2);
        assertThat(twice.cli.err).contains("given twice");
        assertThat(twice.processes).as("processes started").isEmpty();
    }

    @Test
    void aFileSettingSaysWhetherTheFileIsMissingOrAFolder(@org.junit.jupiter.api.io.TempDir Path dir) {
        Cli missing = Cli.run("serve", "--tls-cert", dir.resolve("cert.pem").toString(), "--tls-key",
                dir.toString(), "--handler-path", dir.resolve("handlers.jar").toString());
        assertThat(missing.exitCode).isEqualTo(2);
        assertThat(missing.err).contains("--tls-cert " + dir.resolve("cert.pem") + ": no such file")
                .contains("--tls-key " + dir + ": is a folder, not a file")
                .contains("--handler-path " + dir.resolve("handlers.jar") + ": no such jar or folder")
                .doesNotContain("readable");
    }

    @Test
    void theDefaultsPass() {
        Settings.resolve(Map.of(), Map.of(), null).validate();
    }

    @Test
    void demoNamesABadTimeout() {
        Cli c = Cli.run("demo", "--timeout", "forever");
        assertThat(c.exitCode).isEqualTo(2);
        assertThat(c.err).contains("--timeout").contains("'forever'");
    }

    private record Started(Cli cli, Set<String> processes) {
    }

    /**
     * Runs the command while a thread records every process this JVM starts (embedded Redis and PostgreSQL are
     * child processes), until the command has returned.
     */
    private static Started watchingChildProcesses(java.util.function.Supplier<Cli> command) throws Exception {
        Set<Long> before = ProcessHandle.current().descendants().map(ProcessHandle::pid).collect(Collectors.toSet());
        Set<String> seen = ConcurrentHashMap.newKeySet();
        Thread watcher = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                ProcessHandle.current().descendants().filter(p -> !before.contains(p.pid()))
                        .forEach(p -> seen.add(p.pid() + " " + p.info().commandLine().orElse("?")));
                java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
            }
        }, "child-process-watcher");
        watcher.start();
        try {
            Cli cli = command.get();
            return new Started(cli, Set.copyOf(seen));
        } finally {
            watcher.interrupt();
            watcher.join();
        }
    }
}
