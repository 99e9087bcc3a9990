package dev.runbus.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.BusListener;
import dev.runbus.DeadLetter;
import dev.runbus.SubscribeOptions;
import java.time.Duration;

/**
 * A second process for the dead-letter alarm's test: consumes topic {@code jobs} in group {@code g} as consumer
 * {@code child}, failing every message of type {@code poison} at once, and prints {@code dead <id>} for each dead
 * letter it makes and {@code raised <topic>} for each alarm it hears. Args: Redis URI, key prefix.
 */
public final class DeadLetterAlarmChild {

    private DeadLetterAlarmChild() {
    }

    public static void main(String[] args) throws Exception {
        BusConfig config = BusConfig.builder(args[0]).keyPrefix(args[1]).partitions("jobs", 2).build();
        Bus bus = Bus.connect(config);
        bus.addListener(new BusListener() {
            @Override
            public void onDeadLetter(DeadLetter d) {
                System.out.println("dead " + d.id());
            }

            @Override
            public void onDeadLetterDepthRaised(String topic) {
                System.out.println("raised " + topic);
            }
        });
        bus.subscribe("jobs", "g", "child", d -> {
            if (d.message().type().equals("poison")) {
                throw new IllegalStateException("poison");
            }
        }, SubscribeOptions.builder().maxDeliveries(1).blockTime(Duration.ofMillis(100)).build());
        System.out.println("ready");
        Thread.currentThread().join(); // until killed
    }
}
