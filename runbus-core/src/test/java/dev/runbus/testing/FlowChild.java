package dev.runbus.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import java.time.Duration;

/**
 * A consumer with a flow cap in a child JVM whose handlers start and never finish, so that a test can kill the
 * process while it holds its keys' slots. Prints {@code HANDLING <flow key> <message id>} when a handler starts.
 *
 * <p>Arguments: redis-uri key-prefix topic group consumer min-idle-millis flow-cap concurrency
 */
public final class FlowChild {

    public static void main(String[] args) throws Exception {
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1]).build());
        Duration minIdle = Duration.ofMillis(Long.parseLong(args[5]));
        SubscribeOptions options = SubscribeOptions.builder().concurrency(Integer.parseInt(args[7])).batchSize(10)
                .minIdle(minIdle).claimInterval(minIdle).blockTime(Duration.ofMillis(200))
                .flowCap(Integer.parseInt(args[6])).build();
        bus.subscribe(args[2], args[3], args[4], d -> {
            System.out.println("HANDLING " + d.message().flowKey() + " " + d.message().id());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }, options);
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
