package dev.runbus.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A consumer in a child JVM whose handler kills its process ({@code Runtime.halt}, as an OOM kill, a native crash or
 * a library's {@code System.exit} would) on a message whose payload is {@code poison}, and handles every other one.
 * Prints {@code STARTED <payload>} when a handler starts and {@code HANDLED <payload>} when it returns, and
 * {@code READY} once subscribed.
 *
 * <p>Arguments: redis-uri key-prefix topic group consumer concurrency batch-size max-deliveries min-idle-millis
 * ordered(true|false) partitions
 */
public final class PoisonConsumer {

    public static void main(String[] args) throws Exception {
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1])
                .partitions(args[2], Integer.parseInt(args[10])).build());
        SubscribeOptions options = SubscribeOptions.builder().concurrency(Integer.parseInt(args[5]))
                .batchSize(Integer.parseInt(args[6])).maxDeliveries(Integer.parseInt(args[7]))
                .minIdle(Duration.ofMillis(Long.parseLong(args[8]))).ordered(Boolean.parseBoolean(args[9])).build();
        bus.subscribe(args[2], args[3], args[4], d -> {
            String payload = new String(d.message().payload(), StandardCharsets.UTF_8);
            say("STARTED " + payload);
            if (payload.equals("poison")) {
                Runtime.getRuntime().halt(1);
            }
            say("HANDLED " + payload);
        }, options);
        say("READY");
        Thread.sleep(Long.MAX_VALUE);
    }

    /** A line the parent reads, flushed at once: the process may be halted right after it. */
    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
