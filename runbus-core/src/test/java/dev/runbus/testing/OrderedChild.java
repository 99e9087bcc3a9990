package dev.runbus.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Partitioner;
import dev.runbus.SubscribeOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * An ordered consumer in a child JVM, for fault tests: it logs every handler start to a Redis list as
 * {@code "<consumer> <partition> <key> <seq> <fencing token>"} before doing 2 ms of work, closes the bus on SIGTERM,
 * and prints {@code READY} once subscribed.
 *
 * <p>Arguments: redis-uri key-prefix topic partitions consumer lease-millis log-key
 */
public final class OrderedChild {

    public static void main(String[] args) throws Exception {
        String topic = args[2];
        int partitions = Integer.parseInt(args[3]);
        String consumer = args[4];
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1]).partitions(topic, partitions).build());
        RedisCommands<String, String> log = RedisClient.create(args[0]).connect().sync();
        SubscribeOptions options = SubscribeOptions.builder().ordered(true).concurrency(4).batchSize(20)
                .leaseTime(Duration.ofMillis(Long.parseLong(args[5]))).blockTime(Duration.ofMillis(300))
                .minIdle(Duration.ofMillis(200)).shutdownTimeout(Duration.ofSeconds(5)).build();
        bus.subscribe(topic, "g", consumer, d -> {
            String[] ks = new String(d.message().payload(), StandardCharsets.UTF_8).split(":");
            log.rpush(args[6], consumer + " " + Partitioner.partitionOf(ks[0], partitions) + " " + ks[0] + " " + ks[1]
                    + " " + d.fencingToken());
            Thread.sleep(2);
        }, options);
        Runtime.getRuntime().addShutdownHook(new Thread(bus::close));
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
