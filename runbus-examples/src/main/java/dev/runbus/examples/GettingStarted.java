package dev.runbus.examples;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.Subscription;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The README's first program: connect, consume in a group, publish three orders, wait until they are handled,
 * close. What is between the snippet markers is what the README shows (a test keeps the two the same).
 *
 * <p>Usage: {@code GettingStarted} (Redis at {@code RUNBUS_REDIS_URL}, default {@code redis://127.0.0.1:6379}; {@code
 * ./runbus dev} starts one and prints the variable: {@link ExampleServers}).
 */
public final class GettingStarted {

    private GettingStarted() {
    }

    public static void main(String[] args) throws Exception {
        String redisUri = ExampleServers.redisUrl();
        String keyPrefix = "runbus-example-" + ProcessHandle.current().pid();
        try {
            System.out.println("handled: " + run(redisUri, keyPrefix));
        } finally {
            ExampleKeys.deleteAll(redisUri, keyPrefix);
        }
    }

    /** Publishes three orders and returns them as the handler saw them. */
    static List<String> run(String redisUri, String keyPrefix) throws InterruptedException {
        // snippet:start getting-started
        List<String> handled = new CopyOnWriteArrayList<>();
        try (Bus bus = Bus.connect(BusConfig.builder(redisUri).keyPrefix(keyPrefix).build())) {
            CountDownLatch done = new CountDownLatch(3);
            // One consumer of group "billing". Return = ack; throw = delivered again later (maxDeliveries
            // times at most, then the message goes to the dead-letter stream).
            try (Subscription billing = bus.subscribe("orders", "billing", "billing-1", delivery -> {
                String order = new String(delivery.message().payload(), StandardCharsets.UTF_8);
                handled.add(order);   // your work here: make it idempotent, keyed by delivery.message().id()
                done.countDown();
            })) {
                for (int i = 1; i <= 3; i++) {
                    byte[] payload = ("{\"order\":" + i + "}").getBytes(StandardCharsets.UTF_8);
                    bus.publisher().publish("orders", Message.of("order.created", payload));
                }
                done.await(30, TimeUnit.SECONDS);   // a service keeps its subscription until it stops
            }   // closing waits for running handlers and sends their acks
        }
        // snippet:end
        return handled;
    }
}
