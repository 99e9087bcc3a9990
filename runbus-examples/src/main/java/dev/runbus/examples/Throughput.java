package dev.runbus.examples;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A quick local throughput check (the benchmark module measures properly, side by side with other
 * libraries): publish N messages of about 200 bytes in pipelined batches, then drain them with C consumers
 * of one group and a no-op handler. Prints publish rate and drain rate (first read to last ack).
 *
 * <p>Usage: {@code Throughput [--redis URI] [--messages 200000] [--consumers 4] [--concurrency 1]}; the URI defaults
 * as {@link ExampleServers} says.
 */
public final class Throughput {

    public static void main(String[] args) throws Exception {
        String redis = ExampleServers.redisUrl();
        int messages = 200_000;
        int consumers = 4;
        int concurrency = 1;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--redis": redis = args[++i]; break;
                case "--messages": messages = Integer.parseInt(args[++i]); break;
                case "--consumers": consumers = Integer.parseInt(args[++i]); break;
                case "--concurrency": concurrency = Integer.parseInt(args[++i]); break;
                default:
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
            }
        }
        String prefix = "runbus-throughput-" + ProcessHandle.current().pid();
        byte[] payload = new byte[200];
        java.util.Arrays.fill(payload, (byte) 'x');
        try (Bus bus = Bus.connect(BusConfig.builder(redis).keyPrefix(prefix).build())) {
            long t0 = System.nanoTime();
            List<Message> batch = new ArrayList<>(1000);
            for (int i = 0; i < messages; i++) {
                batch.add(Message.of("bench", payload));
                if (batch.size() == 1000) {
                    bus.publisher().publishAll("bench", batch);
                    batch.clear();
                }
            }
            if (!batch.isEmpty()) {
                bus.publisher().publishAll("bench", batch);
            }
            long t1 = System.nanoTime();
            System.out.printf("publish: %,d messages in %.2f s = %,.0f msg/s%n", messages, (t1 - t0) / 1e9,
                    messages / ((t1 - t0) / 1e9));

            AtomicLong handled = new AtomicLong();
            SubscribeOptions o = SubscribeOptions.builder().concurrency(concurrency).blockTime(Duration.ofMillis(100))
                    .build();
            List<Subscription> subs = new ArrayList<>();
            long t2 = System.nanoTime();
            for (int c = 0; c < consumers; c++) {
                subs.add(bus.subscribe("bench", "g", "c" + c, d -> handled.incrementAndGet(), o));
            }
            final int total = messages;
            while (handled.get() < total || bus.inspector().groups("bench").get(0).pending() > 0) {
                Thread.sleep(1);
            }
            long t3 = System.nanoTime();
            System.out.printf("drain: %,d messages, %d consumers x concurrency %d, in %.2f s = %,.0f msg/s "
                    + "(publish -> handler -> ack, no-op handler)%n", messages, consumers, concurrency,
                    (t3 - t2) / 1e9, messages / ((t3 - t2) / 1e9));
            subs.forEach(Subscription::close);
            bus.pruneDeadConsumers("bench", "g");
        } finally {
            ExampleKeys.deleteAll(redis, prefix);
        }
    }
}
