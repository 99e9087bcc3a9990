package dev.runbus.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A worker with a flow cap of 1 in a child JVM whose handler kills its process (halt) on a message whose payload
 * starts with {@code poison}, and prints {@code DONE <payload>} for the others. Prints {@code POISON <attempt>} before
 * it dies.
 *
 * <p>Arguments: redis-uri key-prefix topic group consumer min-idle-millis max-deliveries
 */
public final class FlowPoisonWorker {

    public static void main(String[] args) throws Exception {
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1]).build());
        Duration minIdle = Duration.ofMillis(Long.parseLong(args[5]));
        SubscribeOptions options = SubscribeOptions.builder().concurrency(4).batchSize(10).minIdle(minIdle)
                .claimInterval(minIdle.dividedBy(2)).blockTime(Duration.ofMillis(200))
                .maxDeliveries(Integer.parseInt(args[6])).flowCap(1).build();
        bus.subscribe(args[2], args[3], args[4], d -> {
            String body = new String(d.message().payload(), StandardCharsets.UTF_8);
            if (body.startsWith("poison")) {
                System.out.println("POISON " + d.attempt());
                System.out.flush();
                Runtime.getRuntime().halt(1);
            }
            System.out.println("DONE " + body);
        }, options);
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
