package dev.runbus.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * An ordered consumer of group {@code g} in a child JVM, on any Redis (a cluster's seeds too): it prints
 * {@code "RAN <payload> <consumer> <fencing token>"} for each entry it handles, and {@code READY} once subscribed; it
 * closes the bus on SIGTERM. For tests that pause a whole consumer process ({@link dev.runbus.testkit.ChildJvm#pause}).
 *
 * <p>Arguments: redis-uri key-prefix topic partitions consumer lease-millis command-timeout-millis
 */
public final class OrderedClusterChild {

    public static void main(String[] args) throws Exception {
        String topic = args[2];
        String consumer = args[4];
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1]).partitions(topic, Integer.parseInt(args[3]))
                .commandTimeout(Duration.ofMillis(Long.parseLong(args[6]))).build());
        SubscribeOptions options = SubscribeOptions.builder().ordered(true).concurrency(6)
                .leaseTime(Duration.ofMillis(Long.parseLong(args[5]))).build();
        bus.subscribe(topic, "g", consumer, d -> {
            String line = "RAN " + new String(d.message().payload(), StandardCharsets.UTF_8) + " " + consumer + " "
                    + d.fencingToken();
            synchronized (System.out) {
                System.out.println(line);
                System.out.flush();
            }
        }, options);
        Runtime.getRuntime().addShutdownHook(new Thread(bus::close));
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
