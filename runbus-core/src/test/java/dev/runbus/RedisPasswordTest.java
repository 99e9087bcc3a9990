package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.runbus.testkit.RedisServerProcess;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Redis password given apart from the URL ({@link BusConfig#redisCredentials()}) reaches a server that
 * requires one, and no failure to connect — wrong password, unreachable host — carries a password in any message
 * of its cause chain, nor does the configuration's toString.
 */
class RedisPasswordTest {

    private static final String PASSWORD = "pw-" + UUID.randomUUID();
    private static RedisServerProcess server;

    @BeforeAll
    static void start() {
        server = RedisServerProcess.start("--requirepass", PASSWORD);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void thePasswordGivenApartFromTheUrlReachesAServerThatRequiresOne() {
        try (Bus bus = Bus.connect(BusConfig.builder(server.uri()).keyPrefix("test-pw")
                .redisPassword(PASSWORD.toCharArray()).build())) {
            bus.publisher().publish("t", Message.of("x", "y".getBytes(StandardCharsets.UTF_8)));
            assertThat(bus.inspector().stream("t")).hasValueSatisfying(s -> assertThat(s.length()).isEqualTo(1));
        }
    }

    @Test
    void theGivenPasswordReplacesTheUrls() {
        String url = "redis://:stale-password@127.0.0.1:" + server.port();
        try (Bus bus = Bus.connect(BusConfig.builder(url).keyPrefix("test-pw")
                .redisPassword(PASSWORD.toCharArray()).build())) {
            assertThat(bus.inspector().streams()).isNotNull();
        }
    }

    @Test
    void aWrongPasswordFailsWithoutAnyPasswordInTheCauseChain() {
        String wrong = "wrong-" + UUID.randomUUID();
        Throwable given = catchThrowable(() -> Bus.connect(BusConfig.builder(server.uri())
                .redisPassword(wrong.toCharArray()).build()));
        assertThat(given).isInstanceOf(RunbusException.class).hasMessageContaining("127.0.0.1:" + server.port());
        assertNoSecretIn(given, wrong, PASSWORD);

        Throwable inUrl = catchThrowable(() -> Bus.connect(BusConfig.builder(
                "redis://:" + wrong + "@127.0.0.1:" + server.port()).build()));
        assertThat(inUrl).isInstanceOf(RunbusException.class);
        assertNoSecretIn(inUrl, wrong, PASSWORD);

        Throwable none = catchThrowable(() -> Bus.connect(BusConfig.builder(server.uri()).build()));
        assertThat(none).isInstanceOf(RunbusException.class);
    }

    @Test
    void anUnreachableHostFailsWithoutAnyPasswordInTheCauseChain() {
        String secret = "secret-" + UUID.randomUUID();
        int closedPort = 1;
        Throwable inUrl = catchThrowable(() -> Bus.connect(BusConfig.builder(
                "redis://user:" + secret + "@127.0.0.1:" + closedPort).build()));
        assertThat(inUrl).isInstanceOf(RunbusException.class).hasMessageContaining("127.0.0.1:" + closedPort);
        assertNoSecretIn(inUrl, secret);

        Throwable given = catchThrowable(() -> Bus.connect(BusConfig.builder("redis://127.0.0.1:" + closedPort)
                .redisCredentials(RedisCredentials.of("user", secret.toCharArray())).build()));
        assertThat(given).isInstanceOf(RunbusException.class);
        assertNoSecretIn(given, secret);

        Throwable cluster = catchThrowable(() -> Bus.connect(BusConfig.builder(
                "redis-cluster://:" + secret + "@127.0.0.1:" + closedPort).build()));
        assertThat(cluster).isInstanceOf(RunbusException.class);
        assertNoSecretIn(cluster, secret);
    }

    @Test
    void theConfigurationsTextShowsNeitherTheUrlsPasswordNorTheGivenOne() {
        BusConfig config = BusConfig.builder("redis://:in-the-url@127.0.0.1:6379")
                .redisCredentials(RedisCredentials.of("worker", "given-apart".toCharArray())).build();
        assertThat(config.toString()).doesNotContain("in-the-url").doesNotContain("given-apart")
                .contains("redis://:****@127.0.0.1:6379").contains("user=worker");
    }

    @Test
    void credentialsKeepACopyOfThePasswordAndRefuseAnEmptyOne() {
        char[] given = "s3cret".toCharArray();
        RedisCredentials c = RedisCredentials.password(given);
        java.util.Arrays.fill(given, '*');
        assertThat(c.password()).containsExactly('s', '3', 'c', 'r', 'e', 't');
        assertThat(c.toString()).doesNotContain("s3cret").contains("user=default");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RedisCredentials.password(new char[0]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("empty");
    }

    /** Every message and text of the throwable, its causes and their suppressed ones: none holds a secret. */
    private static void assertNoSecretIn(Throwable thrown, String... secrets) {
        List<String> texts = new ArrayList<>();
        collect(thrown, texts, 0);
        assertThat(texts).isNotEmpty();
        for (String text : texts) {
            for (String secret : secrets) {
                assertThat(text).as("a message of the cause chain").doesNotContain(secret);
            }
        }
    }

    private static void collect(Throwable t, List<String> texts, int depth) {
        if (t == null || depth > 20) {
            return;
        }
        texts.add(String.valueOf(t.getMessage()));
        texts.add(t.toString());
        for (Throwable s : t.getSuppressed()) {
            collect(s, texts, depth + 1);
        }
        collect(t.getCause() == t ? null : t.getCause(), texts, depth + 1);
    }
}
