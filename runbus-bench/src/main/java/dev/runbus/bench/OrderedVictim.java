package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import java.time.Duration;

/**
 * The ordered consumer {@link OrderedScenario} kills: consumer "victim" of group "g" of topic "t". Prints
 * {@code READY} once subscribed. Arguments: redis-uri key-prefix partitions lease-millis.
 */
public final class OrderedVictim {

    public static void main(String[] args) throws Exception {
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1])
                .partitions("t", Integer.parseInt(args[2])).build());
        bus.subscribe("t", "g", "victim", d -> { }, SubscribeOptions.builder().ordered(true)
                .leaseTime(Duration.ofMillis(Long.parseLong(args[3]))).build());
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
