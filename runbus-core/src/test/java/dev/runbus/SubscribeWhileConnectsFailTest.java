package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A subscription of a bus that reached its Redis starts even when connecting its reader fails for a moment (a
 * Sentinel failover kills the old master's clients, and a connect caught in its handshake fails): the connect is tried
 * again within the reader's timeout. A loaded run saw a {@code runbus worker} exit at start with "Unable to connect"
 * to a live master. Here the connects fail through a proxy whose target does not listen, until the test points it at
 * the server again.
 */
class SubscribeWhileConnectsFailTest {

    private RedisServerProcess server;
    private TcpProxy proxy;

    @BeforeEach
    void start() {
        server = RedisServerProcess.start();
        proxy = TcpProxy.start("127.0.0.1", server.port());
    }

    @AfterEach
    void stop() {
        proxy.close();
        server.close();
    }

    @Test
    void aSubscribeWhoseReaderCannotConnectForAMomentStartsOnceItCan() throws Exception {
        String prefix = "test-connects-" + UUID.randomUUID();
        try (Bus bus = Bus.connect(BusConfig.builder(proxy.uri()).keyPrefix(prefix)
                .commandTimeout(Duration.ofSeconds(5)).build())) {
            int closedPort;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
                closedPort = s.getLocalPort(); // free once closed: nothing listens there
            }
            proxy.forwardTo("redis://127.0.0.1:" + closedPort);
            List<String> handled = new CopyOnWriteArrayList<>();
            CompletableFuture<Subscription> subscribed = CompletableFuture.supplyAsync(() -> bus.subscribe("jobs", "g",
                    "c", d -> handled.add(new String(d.message().payload(), StandardCharsets.UTF_8)),
                    SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build()));
            Wait.until("a connect of the reader failed", Duration.ofSeconds(10),
                    () -> proxy.unreachedConnections() > 0 || subscribed.isDone());
            assertThat(subscribed).as("subscribe waits while its reader cannot connect").isNotDone();
            proxy.forwardTo(server.uri());
            Subscription subscription = subscribed.get(30, TimeUnit.SECONDS);
            bus.publisher().publish("jobs", Message.of("job", "one".getBytes(StandardCharsets.UTF_8)));
            Wait.until("the message handled", Duration.ofSeconds(10), () -> handled.size() == 1);
            assertThat(handled).containsExactly("one");
            subscription.close();
        }
    }
}
