package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import java.time.Duration;

/**
 * The consumer that dies in the recovery scenario, in a JVM of its own: it reads {@code K} entries (one batch
 * of K, one handler that never returns, so all K stay in flight and are kept alive), prints
 * {@code HOLDING K}, and waits to be killed with SIGKILL.
 *
 * <p>Arguments: redisUri keyPrefix topic group K minIdleMillis claimIntervalMillis
 */
public final class RecoveryChild {

    private RecoveryChild() {
    }

    public static void main(String[] args) throws Exception {
        String redis = args[0];
        String prefix = args[1];
        String topic = args[2];
        String group = args[3];
        int k = Integer.parseInt(args[4]);
        Duration minIdle = Duration.ofMillis(Long.parseLong(args[5]));
        Duration claimInterval = Duration.ofMillis(Long.parseLong(args[6]));
        Bus bus = Bus.connect(BusConfig.builder(redis).keyPrefix(prefix).build());
        SubscribeOptions options = SubscribeOptions.builder().concurrency(1).batchSize(k).minIdle(minIdle)
                .claimInterval(claimInterval).blockTime(Duration.ofMillis(100)).build();
        Subscription sub = bus.subscribe(topic, group, "doomed", d -> Thread.sleep(Long.MAX_VALUE), options);
        while (sub.inFlight() < k) {
            Thread.sleep(5);
        }
        System.out.println("HOLDING " + sub.inFlight());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
