package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A worker of {@link FlowKillsScenario}, in a JVM of its own so that it can be killed: a subscription with a cap per
 * flow key and a cap for the topic, whose handlers print {@code S <flow key> <message id> <stream id> <µs>} when they
 * start and {@code E <flow key> <message id> <µs>} when they end (the machine's clock, which every worker and Redis
 * share), working 50 to 150 ms in between. SIGTERM closes the bus (a shutdown hook), letting running handlers finish
 * within a second.
 *
 * <p>Arguments: redis-uri key-prefix topic group consumer min-idle-ms claim-interval-ms key-cap topic-cap concurrency
 */
public final class FlowKillsChild {

    private FlowKillsChild() {
    }

    public static void main(String[] args) throws Exception {
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1]).build());
        Duration minIdle = Duration.ofMillis(Long.parseLong(args[5]));
        SubscribeOptions options = SubscribeOptions.builder().minIdle(minIdle)
                .claimInterval(Duration.ofMillis(Long.parseLong(args[6]))).flowCap(Integer.parseInt(args[7]))
                .flowTopicCap(Integer.parseInt(args[8])).concurrency(Integer.parseInt(args[9])).batchSize(20)
                .blockTime(Duration.ofMillis(200)).maxDeliveries(20).shutdownTimeout(Duration.ofSeconds(1)).build();
        bus.subscribe(args[2], args[3], args[4], d -> {
            String key = d.message().flowKey();
            String id = d.message().id();
            String streamId = d.streamId().replaceAll("@.*", ""); // as the holds name it: without the partition
            println("S " + key + " " + id + " " + streamId + " " + micros());
            Thread.sleep(ThreadLocalRandom.current().nextLong(50, 151));
            println("E " + key + " " + id + " " + micros());
        }, options);
        Runtime.getRuntime().addShutdownHook(new Thread(bus::close));
        println("READY");
        Thread.sleep(Long.MAX_VALUE);
    }

    /** One line at a time, whole: the handlers print from many threads. */
    private static synchronized void println(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static long micros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }
}
