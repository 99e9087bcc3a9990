package dev.runbus.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import java.time.Duration;

/**
 * A consumer in a child JVM that starts a handler and never finishes it, so that a test can kill the
 * process with SIGKILL mid-handler. Prints {@code HANDLING <stream id>} when the handler starts.
 *
 * <p>Arguments: redis-uri key-prefix topic group consumer min-idle-millis
 */
public final class DyingConsumer {

    public static void main(String[] args) throws Exception {
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1]).build());
        SubscribeOptions options = SubscribeOptions.builder().concurrency(1).batchSize(1)
                .minIdle(Duration.ofMillis(Long.parseLong(args[5]))).blockTime(Duration.ofMillis(200)).build();
        bus.subscribe(args[2], args[3], args[4], d -> {
            System.out.println("HANDLING " + d.streamId());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }, options);
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
