package dev.runbus.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A worker with a flow cap in a child JVM, for tests that kill workers while they run: each handler prints
 * {@code START <flow key> <message id> <µs>} and {@code END <flow key> <message id> <µs>} (the machine's clock, which
 * every worker shares), and works 50 to 150 ms in between. SIGTERM closes the bus (its shutdown hook), letting running
 * handlers finish within a second.
 *
 * <p>Arguments: redis-uri key-prefix topic group consumer min-idle-millis flow-cap concurrency [rate-per-second
 * [topic-cap]] (a flow cap or topic cap of -1: none; a rate of -: none; with a rate, the handlers also print the
 * entry's stream id after its message id)
 */
public final class FlowWorker {

    public static void main(String[] args) throws Exception {
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1]).build());
        Duration minIdle = Duration.ofMillis(Long.parseLong(args[5]));
        boolean rated = args.length > 8 && !args[8].equals("-");
        SubscribeOptions options = SubscribeOptions.builder().concurrency(Integer.parseInt(args[7])).batchSize(20)
                .minIdle(minIdle).claimInterval(minIdle.dividedBy(2)).blockTime(Duration.ofMillis(200))
                .maxDeliveries(20).shutdownTimeout(Duration.ofSeconds(1)).flowCap(Integer.parseInt(args[6]))
                .flowRate(rated ? dev.runbus.FlowRate.perSecond(Integer.parseInt(args[8])) : null)
                .flowTopicCap(args.length > 9 ? Integer.parseInt(args[9]) : -1).build();
        bus.subscribe(args[2], args[3], args[4], d -> {
            String what = d.message().flowKey() + " " + d.message().id() + (rated ? " " + d.streamId() : "");
            System.out.println("START " + what + " " + micros());
            Thread.sleep(ThreadLocalRandom.current().nextLong(50, 151));
            System.out.println("END " + what + " " + micros());
        }, options);
        Runtime.getRuntime().addShutdownHook(new Thread(bus::close));
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    private static long micros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }
}
