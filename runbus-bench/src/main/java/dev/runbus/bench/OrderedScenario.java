package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scenario 7: a topic of {@value #PARTITIONS} partitions drained by {@value #CONSUMERS} consumers of runbus
 * (concurrency {@value #CONSUMERS} each), unordered and ordered, with a no-op handler and with a 1 ms handler;
 * and the time ordered consumers take to own every partition again after one of them is killed with SIGKILL.
 *
 * <p>The ideal for the 1 ms handler is {@code partitions / 1 ms}: every partition busy all the time, nothing
 * else costing anything. A rate is the messages, keyed over {@value #KEYS} keys, over the time from the first
 * publish (the consumers are running and, when ordered, own their shares) until every one is acknowledged.
 */
final class OrderedScenario {

    static final int PARTITIONS = 16;
    static final int CONSUMERS = 4;
    static final int KEYS = 1_000;
    static final long LEASE_MILLIS = 3_000;

    record Result(int partitions, int consumers, int messages, int slowMessages, List<Double> onePartition,
                  List<Double> unordered, List<Double> ordered, List<Double> orderedSlow, double sleepMillis,
                  long leaseMillis, List<Double> rebalanceSeconds) implements java.io.Serializable {

        /** partitions per millisecond of handler time: the most a 1 ms handler allows. */
        double idealSlowRate() {
            return partitions * 1000.0;
        }

        /** The most the handler allows on this machine, where {@code Thread.sleep(1)} takes {@code sleepMillis}. */
        double sleepBoundRate() {
            return partitions * 1000.0 / sleepMillis;
        }
    }

    private OrderedScenario() {
    }

    static Result run(Env env) throws Exception {
        int messages = env.sizes.drainMessages();
        int slow = messages / 5;
        List<Double> onePartition = new ArrayList<>();
        List<Double> unordered = new ArrayList<>();
        List<Double> ordered = new ArrayList<>();
        List<Double> orderedSlow = new ArrayList<>();
        List<Double> rebalance = new ArrayList<>();
        for (int round = 0; round < env.options.repeats(); round++) {
            onePartition.add(drain(env, 1, messages, false, false));
            unordered.add(drain(env, PARTITIONS, messages, false, false));
            ordered.add(drain(env, PARTITIONS, messages, true, false));
            orderedSlow.add(drain(env, PARTITIONS, slow, true, true));
            rebalance.add(rebalanceAfterKill(env));
            Progress.say("ordered round %d/%d: unordered on 1 partition %s msg/s, on %d %s msg/s, ordered %s msg/s,"
                    + " ordered 1 ms handler %s msg/s (ideal %s), all partitions owned again %.2f s after a SIGKILL"
                    + " (lease %d ms)", round + 1, env.options.repeats(), Fmt.rate(onePartition.get(round)),
                    PARTITIONS, Fmt.rate(unordered.get(round)), Fmt.rate(ordered.get(round)),
                    Fmt.rate(orderedSlow.get(round)), Fmt.rate(PARTITIONS * 1000.0), rebalance.get(round),
                    LEASE_MILLIS);
        }
        return new Result(PARTITIONS, CONSUMERS, messages, slow, onePartition, unordered, ordered, orderedSlow,
                sleepMillis(), LEASE_MILLIS, rebalance);
    }

    /** How long {@code Thread.sleep(1)} takes here, on average over 1,000 sleeps. */
    private static double sleepMillis() throws InterruptedException {
        long start = System.nanoTime();
        for (int i = 0; i < 1_000; i++) {
            Thread.sleep(1);
        }
        return (System.nanoTime() - start) / 1e6 / 1_000;
    }

    private static BusConfig config(Env env, String prefix, int partitions) {
        return BusConfig.builder(env.options.redisUri()).keyPrefix(prefix).partitions("t", partitions).build();
    }

    private static SubscribeOptions options(boolean ordered) {
        return SubscribeOptions.builder().concurrency(CONSUMERS).blockTime(Duration.ofMillis(100)).ordered(ordered)
                .leaseTime(Duration.ofMillis(LEASE_MILLIS)).build();
    }

    /**
     * Starts the consumers (ordered ones until each owns its share of the partitions, so that the start-up
     * rebalance is not measured), then publishes {@code n} keyed messages; returns messages per second from the
     * first publish until every message is acknowledged.
     */
    private static double drain(Env env, int partitions, int n, boolean ordered, boolean slow) throws Exception {
        String prefix = env.prefix("ordered-" + env.nextId());
        List<Bus> buses = new ArrayList<>();
        try (Bus producer = Bus.connect(config(env, prefix, partitions))) {
            AtomicLong handled = new AtomicLong();
            for (int c = 0; c < CONSUMERS; c++) {
                Bus bus = Bus.connect(config(env, prefix, partitions));
                buses.add(bus);
                bus.subscribe("t", "g", "c" + c, d -> {
                    if (slow) {
                        Thread.sleep(1);
                    }
                    handled.incrementAndGet();
                }, options(ordered));
            }
            if (ordered) {
                long settleBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!settled(env, prefix) && System.nanoTime() < settleBy) {
                    Thread.sleep(10);
                }
            }
            byte[] payload = new byte[100];
            long start = System.nanoTime();
            for (int from = 0; from < n; from += 1_000) {
                List<Message> batch = new ArrayList<>();
                for (int i = from; i < Math.min(n, from + 1_000); i++) {
                    batch.add(Message.builder("bench", payload).key("key-" + (i % KEYS)).build());
                }
                producer.publisher().publishAll("t", batch);
            }
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
            while (!allAcked(env, prefix, partitions, n, handled) && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            if (handled.get() < n) {
                Progress.say("  ordered: only %d of %d handled within 10 min", handled.get(), n);
                return Double.NaN;
            }
            return n / seconds;
        } finally {
            buses.forEach(Bus::close);
            env.admin.deleteMatching(prefix + ":*");
        }
    }

    /** Every consumer holds the leases of its share of the partitions. */
    private static boolean settled(Env env, String prefix) {
        for (int c = 0; c < CONSUMERS; c++) {
            if (owners(env, prefix, "c" + c) != PARTITIONS / CONSUMERS) {
                return false;
            }
        }
        return true;
    }

    private static boolean allAcked(Env env, String prefix, int partitions, int n, AtomicLong handled) {
        if (handled.get() < n) {
            return false;
        }
        for (int p = 0; p < partitions; p++) {
            String name = new dev.runbus.internal.redis.Partitions("t", partitions).name(p);
            if (env.admin.pending(prefix + ":{" + name + "}:stream", "g") > 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Three ordered consumers own the partitions; a fourth, in a child JVM, takes its share and is killed with
     * SIGKILL. Returns the seconds from the kill until the survivors hold every partition's lease.
     */
    private static double rebalanceAfterKill(Env env) throws Exception {
        String prefix = env.prefix("rebalance-" + env.nextId());
        List<Bus> buses = new ArrayList<>();
        Process child = null;
        try {
            for (int c = 0; c < CONSUMERS - 1; c++) {
                Bus bus = Bus.connect(config(env, prefix, PARTITIONS));
                buses.add(bus);
                bus.subscribe("t", "g", "c" + c, d -> { }, options(true));
            }
            child = new ProcessBuilder(java(), "-Xmx256m", "-cp", RecoveryScenario.classPath(),
                    OrderedVictim.class.getName(), env.options.redisUri(), prefix, Integer.toString(PARTITIONS),
                    Long.toString(LEASE_MILLIS)).redirectErrorStream(true).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8));
            // stderr comes on the same stream: the library's warnings (an old Redis, say) may come before READY
            String line = out.readLine();
            String before = null;
            while (line != null && !line.startsWith("READY")) {
                before = line;
                line = out.readLine();
            }
            if (line == null) {
                throw new IllegalStateException("the consumer to be killed did not start: " + before);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (owners(env, prefix, "victim") < PARTITIONS / CONSUMERS && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            long killedAt = System.nanoTime();
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (owners(env, prefix, null) < PARTITIONS && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            return (System.nanoTime() - killedAt) / 1e9;
        } finally {
            if (child != null && child.isAlive()) {
                child.destroyForcibly();
            }
            buses.forEach(Bus::close);
            env.admin.deleteMatching(prefix + ":*");
        }
    }

    /** Partitions whose lease {@code consumer} holds; with null, partitions held by anyone but the victim. */
    private static int owners(Env env, String prefix, String consumer) {
        int n = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            String holder = env.admin.get(new dev.runbus.internal.redis.Keys(prefix).lease(
                    new dev.runbus.internal.redis.Partitions("t", PARTITIONS).name(p), "g"));
            String owner = holder == null ? null : holder.split(" ")[1];
            if (consumer != null ? consumer.equals(owner) : owner != null && !owner.equals("victim")) {
                n++;
            }
        }
        return n;
    }

    private static String java() {
        return java.nio.file.Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }
}
