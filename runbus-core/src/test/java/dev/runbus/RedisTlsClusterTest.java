package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.TestCertificates;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Redis Cluster whose nodes speak TLS only ({@code rediss-cluster://}), trusted through
 * {@link BusConfig#redisTlsCa()}: the bus works across its masters; with another CA it is refused, saying why.
 */
class RedisTlsClusterTest {

    private static TestCertificates ca;
    private static TestCertificates otherCa;
    private static RedisClusterProcess cluster;

    @BeforeAll
    static void start() {
        ca = TestCertificates.newCa("runbus-test-ca");
        otherCa = TestCertificates.newCa("another-ca");
        cluster = RedisClusterProcess.startTls(3, ca);
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {cluster, ca, otherCa}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // best effort
            }
        }
    }

    private static String url() {
        return "rediss-cluster://" + cluster.seeds();
    }

    @Test
    void withTheRightCaTheBusPublishesDeliversAndAcksOnEveryMaster() {
        // 6 partitions: their hash tags spread over the 3 masters' slots.
        try (Bus bus = Bus.connect(BusConfig.builder(url()).keyPrefix("test-tls").partitions("spread", 6)
                .redisTlsCa(ca.caCertificate()).build())) {
            Set<String> got = ConcurrentHashMap.newKeySet();
            bus.subscribe("spread", "g", "c", d -> got.add(d.message().key()),
                    SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build());
            for (int i = 0; i < 30; i++) {
                bus.publisher().publish("spread", Message.of("t", "x".getBytes(StandardCharsets.UTF_8))
                        .withKey("key-" + i));
            }
            // A plain topic is read blocking, on a connection of its own to its slot's master.
            bus.subscribe("plain", "g", "c", d -> got.add("plain"),
                    SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build());
            bus.publisher().publish("plain", Message.of("t", "x".getBytes(StandardCharsets.UTF_8)));
            Wait.until("30 keys and the plain topic's entry handled", Duration.ofSeconds(20), () -> got.size() == 31);
            Wait.until("every partition acknowledged", Duration.ofSeconds(10),
                    () -> bus.inspector().groups("spread").get(0).pending() == 0);
            assertThat(bus.inspector().partitions("spread", "g")).hasSize(6);
        }
    }

    @Test
    void aClusterWhoseCertificatesAnotherCaSignedIsRefusedSayingSo() {
        assertThatThrownBy(() -> Bus.connect(BusConfig.builder(url()).redisTlsCa(otherCa.caCertificate()).build()))
                .isInstanceOf(RunbusException.class)
                .hasMessageContaining("TLS: Redis's certificate is not signed by a trusted CA");
    }
}
