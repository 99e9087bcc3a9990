package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.BusConfig;
import dev.runbus.ScriptMode;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.TestCertificates;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Redis password from {@code --redis-password-file} (first line) or {@code RUNBUS_REDIS_PASSWORD}, never from
 * a flag, reaching a Redis started with {@code requirepass}, and never printed, by {@code runbus config} or by an
 * error; and {@code --redis-tls-ca} trusting the CA of a Redis that speaks TLS.
 */
class RedisAccessTest {

    private static final String PASSWORD = "pw-" + UUID.randomUUID();
    private static RedisServerProcess redis;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        redis = RedisServerProcess.start("--requirepass", PASSWORD);
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
    }

    private static Environment env(Map<String, String> variables) {
        return new Environment(variables, Hermetic.environment().workingDirectory());
    }

    private Path file(String content) throws IOException {
        return Files.writeString(dir.resolve("redis-password-" + UUID.randomUUID()), content);
    }

    @Test
    void redisScriptsChoosesHowTheBusRunsItsScripts() {
        Map<Setting, String> flags = new java.util.EnumMap<>(Setting.class);
        assertThat(RedisAccess.apply(Settings.resolve(flags, Map.of(), null), BusConfig.builder("redis://x")).build()
                .scriptMode()).isEqualTo(ScriptMode.AUTO);
        flags.put(Setting.REDIS_SCRIPTS, "eval");
        assertThat(RedisAccess.apply(Settings.resolve(flags, Map.of(), null), BusConfig.builder("redis://x")).build()
                .scriptMode()).isEqualTo(ScriptMode.EVAL);
        flags.put(Setting.REDIS_SCRIPTS, "lua");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RedisAccess.apply(
                Settings.resolve(flags, Map.of(), null), BusConfig.builder("redis://x")))
                .hasMessageContaining("redis-scripts must be auto, eval or functions, got 'lua'");
    }

    @Test
    void redisTimeoutIsTheBussCommandTimeout() {
        assertThat(RedisAccess.apply(Settings.resolve(Map.of(), Map.of(), null), BusConfig.builder("redis://x")).build()
                .commandTimeout()).as("default").isEqualTo(java.time.Duration.ofSeconds(10));
        assertThat(RedisAccess.apply(Settings.resolve(Map.of(), Map.of("RUNBUS_REDIS_TIMEOUT", "1500ms"), null),
                BusConfig.builder("redis://x")).build().commandTimeout()).isEqualTo(java.time.Duration.ofMillis(1500));
        for (String bad : new String[] {"0s", "ten seconds", "-1s"}) {
            Settings s = Settings.resolve(Map.of(Setting.REDIS_TIMEOUT, bad), Map.of(), null);
            org.assertj.core.api.Assertions.assertThatThrownBy(s::validate).as(bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("--redis-timeout")
                    .hasMessageContaining(bad);
        }
        Cli c = Cli.run("serve", "--redis-timeout", "0s", "--port", "0");
        assertThat(c.exitCode).as(c.err).isEqualTo(2);
        assertThat(c.err).contains("--redis-timeout must be more than 0s, got 0s");
    }

    @Test
    void thePasswordFilesFirstLineReachesRedis() throws IOException {
        Path file = file(PASSWORD + "\nignored second line\n");
        Cli c = Cli.run("stats", "--redis-url", redis.uri(), "--redis-password-file", file.toString());
        assertThat(c.exitCode).as(c.err).isZero();
        assertThat(c.out + c.err).doesNotContain(PASSWORD);
    }

    @Test
    void theEnvironmentsOrTheFilesPasswordReachesRedisButNotBoth() throws IOException {
        Cli fromEnv = Cli.run(env(Map.of("RUNBUS_REDIS_PASSWORD", PASSWORD)), "stats", "--redis-url", redis.uri());
        assertThat(fromEnv.exitCode).as(fromEnv.err).isZero();

        Path file = file(PASSWORD + "\r\n");
        Cli fromFile = Cli.run(env(Map.of()), "stats", "--redis-url", redis.uri(), "--redis-password-file",
                file.toString());
        assertThat(fromFile.exitCode).as(fromFile.err).isZero();
        assertThat(fromFile.out + fromFile.err).doesNotContain(PASSWORD);

        Cli both = Cli.run(env(Map.of("RUNBUS_REDIS_PASSWORD", "not-this-one")), "stats", "--redis-url",
                redis.uri(), "--redis-password-file", file.toString());
        assertThat(both.exitCode).isEqualTo(2);
        assertThat(both.err).contains("the Redis password is given twice: in RUNBUS_REDIS_PASSWORD and in"
                + " --redis-password-file");
        assertThat(both.out + both.err).doesNotContain(PASSWORD).doesNotContain("not-this-one");
    }

    @Test
    void aWrongPasswordFailsWithoutPrintingIt() {
        Cli c = Cli.run(env(Map.of("RUNBUS_REDIS_PASSWORD", "wrong-" + PASSWORD)), "stats", "--redis-url", redis.uri());
        assertThat(c.exitCode).isEqualTo(1);
        // Redis's WRONGPASS, or "Connection closed prematurely" when Lettuce sees the connection close first
        assertThat(c.err).contains("cannot connect to Redis at 127.0.0.1:" + redis.port()).doesNotContain(PASSWORD);
    }

    @Test
    void aMissingOrEmptyPasswordFileIsNamedNeverShown() throws IOException {
        Path missing = dir.resolve("no-such-file");
        Cli gone = Cli.run("stats", "--redis-url", redis.uri(), "--redis-password-file", missing.toString());
        assertThat(gone.exitCode).isEqualTo(2);
        assertThat(gone.err).contains("--redis-password-file").contains(missing.toString());

        Path empty = file("\nsecond line is not the password\n");
        Cli blank = Cli.run("stats", "--redis-url", redis.uri(), "--redis-password-file", empty.toString());
        assertThat(blank.exitCode).isEqualTo(2);
        assertThat(blank.err).contains(empty.toString()).contains("empty")
                .doesNotContain("second line is not the password");
    }

    @Test
    void configNeverPrintsThePassword() throws IOException {
        Path file = file(PASSWORD + "\n");
        Environment e = env(Map.of("RUNBUS_REDIS_PASSWORD", PASSWORD,
                "RUNBUS_REDIS_URL", "redis://:" + PASSWORD + "@127.0.0.1:" + redis.port()));
        for (String format : new String[] {"--json", "--no-json"}) {
            Cli c = format.equals("--json") ? Cli.run(e, "config", "--redis-password-file", file.toString(), "--json")
                    : Cli.run(e, "config", "--redis-password-file", file.toString());
            assertThat(c.exitCode).as(c.err).isZero();
            assertThat(c.out).contains("redis-password").contains(file.toString()).doesNotContain(PASSWORD);
        }
    }

    @Test
    void theTlsCaSettingTrustsTheCaOfARedisOverTls() {
        try (TestCertificates ca = TestCertificates.newCa("runbus-test-ca");
             RedisServerProcess tls = RedisServerProcess.startTls(ca.issue("IP:127.0.0.1"), ca.caCertificate())) {
            Cli trusted = Cli.run("stats", "--redis-url", tls.uri(), "--redis-tls-ca", ca.caCertificate().toString());
            assertThat(trusted.exitCode).as(trusted.err).isZero();
            Cli jvmOnly = Cli.run("stats", "--redis-url", tls.uri());
            assertThat(jvmOnly.exitCode).isEqualTo(1);
            assertThat(jvmOnly.err).contains("TLS: Redis's certificate is not signed by a trusted CA");
        }
    }
}
