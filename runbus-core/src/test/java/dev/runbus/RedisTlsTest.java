package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.TestCertificates;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Redis over TLS with a CA of the deployment's own ({@link BusConfig#redisTlsCa()}): trusted, the bus works end to
 * end; signed by another CA, or naming another host, the connection is refused with a sentence that says so.
 */
class RedisTlsTest {

    private static TestCertificates ca;
    private static TestCertificates otherCa;
    /** Its certificate names 127.0.0.1 and localhost. */
    private static RedisServerProcess server;
    /** Its certificate, signed by the same CA, names only elsewhere.example. */
    private static RedisServerProcess misnamed;

    @BeforeAll
    static void start() {
        ca = TestCertificates.newCa("runbus-test-ca");
        otherCa = TestCertificates.newCa("another-ca");
        server = RedisServerProcess.startTls(ca.issue("IP:127.0.0.1", "DNS:localhost"), ca.caCertificate());
        misnamed = RedisServerProcess.startTls(ca.issue("DNS:elsewhere.example"), ca.caCertificate());
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {server, misnamed, ca, otherCa}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // best effort
            }
        }
    }

    private static BusConfig config(String uri, Path trusted) {
        return BusConfig.builder(uri).keyPrefix("test-tls").redisTlsCa(trusted).build();
    }

    @Test
    void withTheRightCaTheBusPublishesDeliversAndAcksOverTls() {
        assertThat(server.uri()).startsWith("rediss://");
        try (Bus bus = Bus.connect(config(server.uri(), ca.caCertificate()))) {
            List<String> got = new CopyOnWriteArrayList<>();
            bus.subscribe("tls", "g", "c", d -> got.add(new String(d.message().payload(), StandardCharsets.UTF_8)),
                    SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build());
            bus.publisher().publish("tls", Message.of("t", "over tls".getBytes(StandardCharsets.UTF_8)));
            Wait.until("the entry handled", Duration.ofSeconds(10), () -> got.size() == 1);
            assertThat(got).containsExactly("over tls");
            Wait.until("the entry acknowledged", Duration.ofSeconds(10),
                    () -> bus.inspector().groups("tls").get(0).pending() == 0);
        }
    }

    @Test
    void aCertificateFromAnotherCaIsRefusedWithASentenceSayingSo() {
        assertThatThrownBy(() -> Bus.connect(config(server.uri(), otherCa.caCertificate())))
                .isInstanceOf(RunbusException.class)
                .hasMessageContaining("TLS: Redis's certificate is not signed by a trusted CA")
                .hasMessageContaining(otherCa.caCertificate().toString());
    }

    @Test
    void withoutTheCaTheJvmTrustStoreDoesNotTrustTheServer() {
        assertThatThrownBy(() -> Bus.connect(BusConfig.builder(server.uri()).keyPrefix("test-tls").build()))
                .isInstanceOf(RunbusException.class)
                .hasMessageContaining("TLS: Redis's certificate is not signed by a trusted CA")
                .hasMessageContaining("the JVM's trust store");
    }

    @Test
    void aCertificateForAnotherHostIsRefusedEvenFromTheTrustedCa() {
        assertThatThrownBy(() -> Bus.connect(config(misnamed.uri(), ca.caCertificate())))
                .isInstanceOf(RunbusException.class)
                .hasMessageContaining("TLS: Redis's certificate does not name the host connected to");
    }

    @Test
    void aCaForAPlainUrlOrAMissingFileIsAConfigurationError() {
        assertThatThrownBy(() -> config("redis://127.0.0.1:6379", ca.caCertificate()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not use TLS");
        Path missing = Path.of("/nonexistent/ca.pem");
        assertThatThrownBy(() -> config(server.uri(), missing))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot read the PEM file " + missing);
    }
}
