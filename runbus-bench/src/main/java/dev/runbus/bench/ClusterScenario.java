package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Inspector;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.ToDoubleFunction;

/**
 * Scenario 8: the same drain on a Redis Cluster of {@value #MASTERS} masters and on one Redis node. A topic of
 * {@value #PARTITIONS} partitions (two on each master of the cluster) is filled with N messages, then
 * {@value #CONSUMERS} runbus consumers of one group drain it; the rate is N over the time from the first
 * subscribe until every message is acknowledged. Both deployments are servers of the benchmark's own
 * ({@link LocalRedis}), started alike, alive for the whole scenario and measured in a random order
 * per round ({@link RoundOrder}).
 *
 * <p>Where the difference goes, per message of the drain: the Redis commands the nodes executed (INFO
 * commandstats, summed over the nodes, without the benchmark's own INFO and XPENDING calls), the CPU time of the
 * Redis processes, and the CPU time of the benchmark's JVM (consumers, Lettuce, GC and JIT together).
 */
final class ClusterScenario {

    static final int MASTERS = 3;
    static final int PARTITIONS = 6;
    static final int CONSUMERS = 4;
    static final int BATCH = SubscribeOptions.DEFAULT_BATCH_SIZE;
    static final String CLUSTER = "cluster";
    static final String SINGLE = "one node";
    private static final String TOPIC = "t";
    private static final String GROUP = "g";

    /**
     * One drain on one deployment. Per message: {@code commands} Redis commands (by command in
     * {@code commandsByName}), {@code redisCpuMicros} µs of Redis CPU and {@code redisCommandMicros} µs inside
     * commands (both summed over the nodes), {@code jvmCpuMicros} µs of the benchmark JVM's CPU.
     */
    record Sample(double rate, double fillRate, double commands, Map<String, Double> commandsByName,
                  double redisCpuMicros, double redisCommandMicros, double jvmCpuMicros)
            implements java.io.Serializable {

        /** Messages each XREADGROUP brought, on average (NaN without reads). */
        double messagesPerRead() {
            Double reads = commandsByName.get("xreadgroup");
            return reads == null || reads == 0 ? Double.NaN : 1 / reads;
        }

        /** Redis CPU and JVM CPU per message together. */
        double cpuMicros() {
            return redisCpuMicros + jvmCpuMicros;
        }

        static final Sample FAILED = new Sample(Double.NaN, Double.NaN, Double.NaN, Map.of(), Double.NaN, Double.NaN,
                Double.NaN);
    }

    /**
     * Per round, one sample of each deployment. {@code partitionsPerMaster}: how many of the topic's partitions
     * each master of the cluster serves.
     */
    record Result(int masters, int partitions, int consumers, int messages, List<Integer> partitionsPerMaster,
                  List<Sample> cluster, List<Sample> single) implements java.io.Serializable {

        List<Double> cluster(ToDoubleFunction<Sample> f) {
            return values(cluster, f);
        }

        List<Double> single(ToDoubleFunction<Sample> f) {
            return values(single, f);
        }

        /** Commands per message of one command, per round (0 when a round did not send it). */
        static ToDoubleFunction<Sample> commands(String name) {
            return s -> Double.isNaN(s.rate()) ? Double.NaN : s.commandsByName().getOrDefault(name, 0.0);
        }

        private static List<Double> values(List<Sample> samples, ToDoubleFunction<Sample> f) {
            List<Double> out = new ArrayList<>();
            samples.forEach(s -> out.add(f.applyAsDouble(s)));
            return out;
        }
    }

    private ClusterScenario() {
    }

    static Result run(Env env) throws Exception {
        int n = env.sizes.drainMessages();
        long started = System.nanoTime();
        try (LocalRedis cluster = LocalRedis.cluster(MASTERS); LocalRedis single = LocalRedis.single()) {
            double startSeconds = (System.nanoTime() - started) / 1e9;
            List<Integer> perMaster = partitionsPerMaster(env, cluster);
            Progress.say("cluster: %d masters (ports %s, partitions per master %s) and one node (port %s) started"
                    + " in %.1f s", MASTERS, cluster.ports(), perMaster, single.ports(), startSeconds);
            List<LocalRedis> deployments = List.of(cluster, single);
            Progress.say("cluster: warm-up, %,d messages per deployment and round", env.sizes.warmupMessages());
            Jit.settle("cluster", () -> {
                for (LocalRedis d : deployments) {
                    drain(env, d, env.sizes.warmupMessages());
                }
            });
            List<Sample> onCluster = new ArrayList<>();
            List<Sample> onOne = new ArrayList<>();
            for (int round = 0; round < env.options.repeats(); round++) {
                for (LocalRedis d : env.order.of(deployments, "cluster", round, ClusterScenario::name)) {
                    Sample s = drain(env, d, n);
                    (d.isCluster() ? onCluster : onOne).add(s);
                    Progress.say("cluster round %d/%d, %-8s %,10.0f msg/s (fill %s msg/s); per message %.3f Redis"
                            + " commands, Redis CPU %.1f µs, JVM CPU %.1f µs", round + 1, env.options.repeats(),
                            name(d), s.rate(), Fmt.rate(s.fillRate()), s.commands(), s.redisCpuMicros(),
                            s.jvmCpuMicros());
                }
                Progress.say("cluster round %d/%d: cluster ÷ one node %s", round + 1, env.options.repeats(),
                        Fmt.ratio(onCluster.get(round).rate() / onOne.get(round).rate()));
            }
            return new Result(MASTERS, PARTITIONS, CONSUMERS, n, perMaster, onCluster, onOne);
        }
    }

    private static String name(LocalRedis d) {
        return d.isCluster() ? CLUSTER : SINGLE;
    }

    private static BusConfig config(LocalRedis d, String prefix) {
        return BusConfig.builder(d.url()).keyPrefix(prefix).partitions(TOPIC, PARTITIONS).build();
    }

    /** Consumers as the drain scenario's runbus contender runs them: concurrency 1, batch 100, block 100 ms. */
    private static SubscribeOptions options() {
        return SubscribeOptions.builder().concurrency(1).batchSize(BATCH).blockTime(Duration.ofMillis(100)).build();
    }

    /**
     * One measurement: connects the producer's and the consumers' buses, fills the topic in batches of
     * {@value Producer#BATCH} ({@code publishAll}), then subscribes the consumers and waits until the handlers
     * saw every message and no partition has anything pending. NaN figures when it failed or timed out.
     */
    private static Sample drain(Env env, LocalRedis d, int n) {
        String prefix = env.prefix("cluster-" + env.nextId());
        List<Bus> consumers = new ArrayList<>();
        try (Bus producer = Bus.connect(config(d, prefix))) {
            for (int c = 0; c < CONSUMERS; c++) {
                consumers.add(Bus.connect(config(d, prefix)));
            }
            double fillRate = fill(producer, n);
            List<String> streams = producer.inspector().partitions(TOPIC, GROUP).stream()
                    .map(Inspector.PartitionInfo::streamKey).toList();
            AtomicLong handled = new AtomicLong();
            ServerCounters before = ServerCounters.read(d);
            long cpu0 = processCpuNanos();
            long t0 = System.nanoTime();
            for (int c = 0; c < CONSUMERS; c++) {
                consumers.get(c).subscribe(TOPIC, GROUP, "c" + c, x -> handled.incrementAndGet(), options());
            }
            long timeoutNanos = Math.max(60_000, n / 1_000 * 1_000L) * 1_000_000L;
            long pendingChecks = awaitAcked(d, streams, handled, n, t0 + timeoutNanos);
            long t1 = System.nanoTime();
            long cpu1 = processCpuNanos();
            if (pendingChecks < 0) {
                Progress.say("  %s: timed out, %,d of %,d handled", name(d), handled.get(), n);
                return Sample.FAILED;
            }
            ServerCounters used = ServerCounters.read(d).minus(before)
                    .without("info", d.nodes().size()).without("xpending", pendingChecks);
            Map<String, Double> byName = new LinkedHashMap<>();
            used.calls().forEach((k, v) -> byName.put(k, (double) v / n));
            return new Sample(n / ((t1 - t0) / 1e9), fillRate, (double) used.totalCalls() / n, Map.copyOf(byName),
                    used.cpuSeconds() * 1e6 / n, (double) used.totalMicros() / n,
                    cpu0 < 0 ? Double.NaN : (cpu1 - cpu0) / 1e3 / n);
        } catch (RuntimeException e) {
            Progress.say("  %s failed: %s", name(d), e);
            return Sample.FAILED;
        } finally {
            consumers.forEach(Bus::close);
            d.flushAll();
        }
    }

    /** Publishes {@code n} messages without keys (so they go to the partitions in turn); returns msg/s. */
    private static double fill(Bus producer, int n) {
        byte[] payload = Payloads.make(Payloads.now(), false);
        long t0 = System.nanoTime();
        for (int from = 0; from < n; from += Producer.BATCH) {
            List<Message> batch = new ArrayList<>(Producer.BATCH);
            for (int i = from; i < Math.min(n, from + Producer.BATCH); i++) {
                batch.add(Message.of("bench", payload));
            }
            producer.publisher().publishAll(TOPIC, batch);
        }
        return n / ((System.nanoTime() - t0) / 1e9);
    }

    /**
     * Waits until the handlers saw {@code n} messages and the group has nothing pending on any partition, asking
     * each stream's node directly. Returns the XPENDING calls it made, or -1 when the deadline passed.
     */
    private static long awaitAcked(LocalRedis d, List<String> streams, AtomicLong handled, int n, long deadline) {
        while (handled.get() < n) {
            if (System.nanoTime() > deadline) {
                return -1;
            }
            LockSupport.parkNanos(500_000);
        }
        long checks = 0;
        for (String stream : streams) {
            LocalRedis.Node node = nodeOf(d, stream);
            while (true) {
                checks++;
                if (node.call(r -> r.xpending(stream, GROUP)).getCount() == 0) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    return -1;
                }
                LockSupport.parkNanos(500_000);
            }
        }
        return checks;
    }

    /** The node that serves {@code key}. */
    private static LocalRedis.Node nodeOf(LocalRedis d, String key) {
        return d.nodes().get(d.masterIndexOf(key));
    }

    /** How many of the topic's partitions each master of the cluster serves (one message published, then flushed). */
    private static List<Integer> partitionsPerMaster(Env env, LocalRedis cluster) {
        String prefix = env.prefix("cluster-layout");
        try (Bus bus = Bus.connect(config(cluster, prefix))) {
            bus.publisher().publish(TOPIC, Message.of("bench", new byte[1]));
            int[] counts = new int[MASTERS];
            for (Inspector.PartitionInfo p : bus.inspector().partitions(TOPIC, GROUP)) {
                counts[cluster.masterIndexOf(p.streamKey())]++;
            }
            List<Integer> out = new ArrayList<>();
            for (int c : counts) {
                out.add(c);
            }
            return out;
        } finally {
            cluster.flushAll();
        }
    }

    private static long processCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }
}
