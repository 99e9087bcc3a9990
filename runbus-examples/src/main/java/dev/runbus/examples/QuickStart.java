package dev.runbus.examples;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.BusListener;
import dev.runbus.DeadLetter;
import dev.runbus.Inspector;
import dev.runbus.Message;
import dev.runbus.Secrets;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The whole bus in one run: a work queue of three consumers, a second group that sees every message
 * (fan-out), a poison message that ends in the dead-letter stream after three deliveries, and a replay.
 * Prints what happened and the throughput of publish → handler → ack.
 *
 * <p>Usage: {@code QuickStart [--redis URI] [--messages 100000]}; the URI defaults to {@code RUNBUS_REDIS_URL}, else
 * {@code redis://127.0.0.1:6379} ({@code ./runbus dev} starts a Redis and prints the variable: {@link ExampleServers}).
 */
public final class QuickStart {

    public static void main(String[] args) throws Exception {
        String redis = ExampleServers.redisUrl();
        int messages = 100_000;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--redis":
                    redis = args[++i];
                    break;
                case "--messages":
                    messages = Integer.parseInt(args[++i]);
                    break;
                default:
                    System.err.println("unknown option " + args[i] + "; usage: QuickStart [--redis URI] [--messages N]");
                    System.exit(2);
            }
        }
        String prefix = "runbus-example-" + ProcessHandle.current().pid();
        String topic = "orders";
        AtomicLong deadLetters = new AtomicLong();
        BusListener listener = new BusListener() {
            @Override
            public void onDeadLetter(DeadLetter d) {
                deadLetters.incrementAndGet();
            }
        };
        System.out.printf("runbus quick start: %,d messages on %s (key prefix %s)%n", messages,
                Secrets.mask(redis), prefix);
        try (Bus bus = Bus.connect(BusConfig.builder(redis).keyPrefix(prefix).listener(listener).build())) {
            Set<String> workDone = ConcurrentHashMap.newKeySet();
            AtomicLong auditSeen = new AtomicLong();
            AtomicLong poisonAttempts = new AtomicLong();
            SubscribeOptions work = SubscribeOptions.builder().concurrency(4).minIdle(Duration.ofMillis(500))
                    .claimInterval(Duration.ofMillis(200)).build();
            List<Subscription> subs = new ArrayList<>();
            for (int c = 1; c <= 3; c++) {
                subs.add(bus.subscribe(topic, "fulfilment", "worker-" + c, d -> {
                    if (d.message().type().equals("order.poison")) {
                        poisonAttempts.incrementAndGet();
                        throw new IllegalArgumentException("order " + d.message().id() + " cannot be parsed");
                    }
                    workDone.add(d.message().id());
                }, work));
            }
            subs.add(bus.subscribe(topic, "audit", "auditor-1", d -> auditSeen.incrementAndGet(),
                    SubscribeOptions.builder().concurrency(2).build()));

            long start = System.nanoTime();
            List<Message> batch = new ArrayList<>(1000);
            for (int i = 0; i < messages; i++) {
                batch.add(Message.builder("order.created", payload(i)).id("order-" + i).build());
                if (batch.size() == 1000 || i == messages - 1) {
                    bus.publisher().publishAll(topic, batch);
                    batch.clear();
                }
            }
            bus.publisher().publish(topic, Message.builder("order.poison", payload(-1)).id("order-poison").build());
            long published = System.nanoTime();
            final int total = messages;
            waitFor(() -> workDone.size() == total && auditSeen.get() >= total, 120);
            long drained = System.nanoTime();
            waitFor(() -> deadLetters.get() == 1, 30);

            double seconds = (drained - start) / 1e9;
            System.out.printf("published %,d in %.2f s; handled by fulfilment (3 consumers) and audit (fan-out) in %.2f s%n",
                    messages, (published - start) / 1e9, seconds);
            System.out.printf("throughput publish → handler → ack: %,.0f msg/s per group, %,.0f deliveries/s in all%n",
                    messages / seconds, 2 * messages / seconds);
            System.out.printf("poison message: %d attempts, then dead-lettered%n", poisonAttempts.get());
            DeadLetter dl = bus.deadLetters().list(topic, null, 10).get(0);
            System.out.printf("dead letter %s: group=%s deliveries=%d reason=%s%n", dl.id(), dl.group(),
                    dl.deliveries(), dl.reason());
            for (Inspector.GroupInfo g : bus.inspector().groups(topic)) {
                System.out.printf("group %-10s consumers=%d pending=%d lag=%d%n", g.name(), g.consumers(),
                        g.pending(), g.lag());
            }
            subs.forEach(Subscription::close);
            ExampleKeys.deleteAll(redis, prefix);
        }
    }

    private static byte[] payload(int i) {
        String json = "{\"order\":" + i + ",\"customer\":\"c-" + (i % 977) + "\",\"items\":[{\"sku\":\"A-1\",\"qty\":2},"
                + "{\"sku\":\"B-7\",\"qty\":1}],\"total\":\"42.50\",\"currency\":\"EUR\",\"note\":\"leave at the door\"}";
        return json.getBytes(StandardCharsets.UTF_8);
    }

    private static void waitFor(java.util.function.BooleanSupplier done, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not done after " + seconds + " s");
            }
            Thread.sleep(5);
        }
    }

}
