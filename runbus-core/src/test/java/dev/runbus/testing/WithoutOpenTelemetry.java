package dev.runbus.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM without OpenTelemetry on its classpath: publishes (plain, batch, delayed) and handles (a handler
 * and a batch handler) with the default configuration, then prints {@code OK}, or the failure.
 * Args: redis URI, key prefix.
 */
public final class WithoutOpenTelemetry {

    private WithoutOpenTelemetry() {
    }

    public static void main(String[] args) throws Exception {
        try {
            Class.forName("io.opentelemetry.api.OpenTelemetry");
            System.out.println("FAILED: OpenTelemetry is on the classpath");
            System.exit(1);
        } catch (ClassNotFoundException expected) {
            // what this child is for
        }
        BusConfig config = BusConfig.builder(args[0]).keyPrefix(args[1]).build();
        try (Bus bus = Bus.connect(config)) {
            CountDownLatch handled = new CountDownLatch(3);
            CountDownLatch batched = new CountDownLatch(1);
            SubscribeOptions options = SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build();
            bus.subscribe("plain", "g", "c", d -> handled.countDown(), options);
            bus.subscribeBatch("batched", "g", "c", batch -> batch.deliveries().forEach(d -> {
                batch.withTraceContext(d, batched::countDown).run();
            }), options);
            bus.publisher().publish("plain", Message.of("t", new byte[0]));
            bus.publisher().publishAll("plain", List.of(Message.of("t", new byte[0])));
            bus.publisher().publish("plain", Message.of("t", new byte[0]), Duration.ofMillis(50));
            bus.publisher().publish("batched", Message.of("t", new byte[0]));
            boolean done = handled.await(30, TimeUnit.SECONDS) && batched.await(30, TimeUnit.SECONDS);
            System.out.println(done && bus.currentTraceContext().isEmpty() && config.equals(config)
                    && config.toString().contains("tracing=off") ? "OK" : "FAILED: not handled in time");
        } catch (Throwable t) {
            System.out.println("FAILED: " + t);
            t.printStackTrace(System.out);
        }
        System.exit(0);
    }
}
