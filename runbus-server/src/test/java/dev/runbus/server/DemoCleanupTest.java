package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.runs.NewRun;
import dev.runbus.server.demo.Demo;
import dev.runbus.server.demo.DemoNamespace;
import dev.runbus.server.demo.DemoPlan;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A demo leaves nothing on servers it did not start, whatever its end: success, a broken plan, an exception,
 * Ctrl-C. And a failed submission fails it at once, with its cause.
 */
@Tag("slow")
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class DemoCleanupTest {

    private static final String DATABASE = DemoEndToEndTest.DATABASE;
    private static final Pattern NAMESPACE =
            Pattern.compile("key prefix (runbus-demo-\\d+), PostgreSQL schema (runbus_demo_\\d+)");

    /** Given only --redis-url, the demo starts an embedded PostgreSQL; its keys on the shared Redis must go. */
    @Test
    void aDemoOnTheSharedRedisAndAnEmbeddedDatabaseRemovesItsKeys() throws Exception {
        Cli c = Cli.run("demo", "--runs", "30", "--users", "5", "--poison-rate", "0", "--no-progress",
                "--redis-url", RedisTarget.local().uri());
        assertThat(c.exitCode).as(c.out + c.err).isZero();
        assertThat(c.out).contains("started embedded PostgreSQL").doesNotContain("started embedded Redis");
        assertLeftNothing(c.out);
    }

    /** A Redis with a password given apart from the URL: the clean-up reaches it as the demo's bus did. */
    @Test
    void aDemoOnARedisWithAPasswordFromTheEnvironmentRemovesItsKeys() {
        String password = "demo-" + java.util.UUID.randomUUID();
        try (dev.runbus.testkit.RedisServerProcess redis = dev.runbus.testkit.RedisServerProcess.start("--requirepass",
                password)) {
            Cli c = Cli.run(new Environment(Map.of("RUNBUS_REDIS_PASSWORD", password),
                    Hermetic.environment().workingDirectory()), "demo", "--runs", "20", "--users", "5",
                    "--poison-rate", "0", "--no-progress", "--redis-url", redis.uri(), "--database-url", DATABASE);
            assertThat(c.exitCode).as(c.out + c.err).isZero();
            Matcher m = NAMESPACE.matcher(c.out);
            assertThat(m.find()).as(c.out).isTrue();
            io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(
                    io.lettuce.core.RedisURI.builder().withHost("127.0.0.1").withPort(redis.port())
                            .withPassword(password.toCharArray()).build());
            try {
                assertThat(client.connect().sync().keys(m.group(1) + ":*")).as("keys left").isEmpty();
            } finally {
                client.shutdown();
            }
            assertThat(DemoIsolationTest.schemaExists(m.group(2))).as("schema left").isFalse();
            assertThat(c.out + c.err).doesNotContain(password);
        }
    }

    /**
     * Given only --database-url, with an embedded Redis: a submission the runs layer refuses (in per-user order, a
     * user id longer than an ordered trigger can carry) fails the demo at once, naming the cause, instead of leaving
     * it to wait out --timeout for runs that were never submitted; and the demo's schema on the shared database is
     * gone. (A NUL in the input, used before, is now refused when the NewRun is made, before any submission.)
     */
    @Test
    void aFailedSubmissionFailsTheDemoAtOnceAndItsSchemaIsRemoved() {
        List<DemoPlan.Submission> submissions = new ArrayList<>(DemoPlan.create(200, 10, 0, 0, 0, 1).submissions());
        submissions.set(100, new DemoPlan.Submission(new NewRun("s", "u".repeat(NewRun.MAX_ORDERED_USER_ID_LENGTH + 1),
                "bad input", "demo-bad"), false, false, false));
        Duration timeout = Duration.ofMinutes(3);
        StringWriter out = new StringWriter();
        Demo demo = new Demo(settings(Map.of(Setting.DATABASE_URL, DATABASE, Setting.ORDERED, "true")),
                new Demo.Options(200, 10, 2, 0, 0, 0, false,
                timeout, false, 1), Hermetic.environment(), new PrintWriter(out, true), new DemoHandler(),
                new DemoPlan(submissions, 0));
        long start = System.nanoTime();
        assertThatThrownBy(demo::run).hasMessageContaining("submitting demo run demo-bad failed")
                .hasMessageContaining(NewRun.MAX_ORDERED_USER_ID_LENGTH + " characters");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("failed well within its --timeout")
                .isLessThan(timeout.dividedBy(3));
        assertThat(out.toString()).contains("started embedded Redis").doesNotContain("started embedded PostgreSQL");
        assertLeftNothing(out.toString());
    }

    /** Ctrl-C (SIGINT) mid-way: the demo stops its workers, removes its keys and schema, and exits 130. */
    @Test
    void ctrlCRemovesTheDemosData() throws Exception {
        Path log = Files.createTempFile("runbus-demo", ".log");
        log.toFile().deleteOnExit();
        List<String> command = Hermetic.runbus("demo", "--runs", "20000", "--no-progress", "--redis-url",
                RedisTarget.local().uri(), "--database-url", DATABASE);
        Process demo = Hermetic.child(new ProcessBuilder(sigintNotIgnored(command))).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        try {
            Wait.until("the demo submitting", Duration.ofSeconds(60), () -> read(log).contains("demo: 2"));
            Matcher m = NAMESPACE.matcher(read(log));
            assertThat(m.find()).isTrue();
            Wait.until("runs in its schema", Duration.ofSeconds(30), () -> DemoIsolationTest.schemaExists(m.group(2)));
            assertThat(new ProcessBuilder("kill", "-INT", String.valueOf(demo.pid())).start().waitFor()).isZero();
            // Its stop waits for the submissions in flight, closes the workers and removes its data.
            boolean stopped = demo.waitFor(90, TimeUnit.SECONDS);
            assertThat(stopped).as("the demo stopped; its output:%n%s%nits threads:%n%s", read(log),
                    stopped ? "" : threadsOf(demo)).isTrue();
            assertThat(demo.exitValue()).as(read(log)).isEqualTo(130);
            assertThat(read(log)).contains("demo stopped by SIGINT");
            assertLeftNothing(read(log));
        } finally {
            demo.destroyForcibly();
        }
    }

    private static Settings settings(Setting url, String value) {
        return settings(Map.of(url, value));
    }

    private static Settings settings(Map<Setting, String> given) {
        Map<Setting, String> flags = new java.util.EnumMap<>(given);
        flags.put(Setting.MIN_IDLE, "2s");
        return DemoNamespace.isolated(Settings.resolve(flags, Map.of(), null), System.currentTimeMillis() * 1000 + 7);
    }

    private static void assertLeftNothing(String output) {
        Matcher m = NAMESPACE.matcher(output);
        assertThat(m.find()).as(output).isTrue();
        assertThat(RedisTarget.local().redis().keys(m.group(1) + ":*")).as("keys left").isEmpty();
        assertThat(DemoIsolationTest.schemaExists(m.group(2))).as("schema left").isFalse();
    }

    /**
     * {@code command}, started so that a SIGINT reaches it as Ctrl-C reaches a program in a terminal. A build started as
     * a shell's background job (`./test &` in a script) runs with SIGINT ignored, its children inherit that, and the
     * JVM keeps an ignored SIGINT ignored (it installs no handler for it): the demo then never heard the signal. Where
     * this JVM ignores SIGINT (Linux: /proc/self/status), the child starts through GNU env --default-signal=INT.
     */
    private static List<String> sigintNotIgnored(List<String> command) {
        try {
            String ignored = Files.readAllLines(Path.of("/proc/self/status")).stream()
                    .filter(line -> line.startsWith("SigIgn:")).map(line -> line.substring(7).trim())
                    .findFirst().orElse("0");
            if ((Long.parseLong(ignored, 16) & (1L << 1)) == 0) { // bit 1: SIGINT (signal 2)
                return command;
            }
        } catch (IOException | RuntimeException notLinux) {
            return command;
        }
        List<String> reset = new ArrayList<>(List.of("env", "--default-signal=INT"));
        reset.addAll(command);
        return reset;
    }

    /** The threads of a process that did not stop, as {@code jcmd Thread.print} shows them, for the failure. */
    private static String threadsOf(Process process) {
        try {
            String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
            Process dump = new ProcessBuilder(jcmd, String.valueOf(process.pid()), "Thread.print")
                    .redirectErrorStream(true).start();
            String out = new String(dump.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            dump.waitFor(30, TimeUnit.SECONDS);
            return out;
        } catch (IOException | InterruptedException e) {
            return "(no thread dump: " + e + ")";
        }
    }

    private static String read(Path log) {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
