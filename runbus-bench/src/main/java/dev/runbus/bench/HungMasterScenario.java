package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.BusListener;
import dev.runbus.Delivery;
import dev.runbus.Inspector;
import dev.runbus.Message;
import dev.runbus.Partitioner;
import dev.runbus.RunbusException;
import dev.runbus.SubscribeOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.ToDoubleFunction;

/**
 * Scenario 10: one master of a Redis Cluster hangs, measured from outside. A cluster of {@value #MASTERS} masters
 * without replicas ({@code cluster-require-full-coverage no}, so that the others go on serving their slots once they
 * mark the hung one failed), a topic of {@value #PARTITIONS} partitions, {@value #RATE} keyed messages per second
 * published to each partition, one consumer of concurrency {@value #CONCURRENCY} (the other options their defaults)
 * and the publishers on one {@link Bus}. One master that does not hold the topic's own keys is stopped with SIGSTOP
 * for {@link #STOP}, past the cluster's node timeout, then resumed. Per round, unordered and ordered:
 *
 * <ul>
 *   <li>the healthy partitions' (those on the other masters) first handlings per second before, during and after the
 *       stop, and the ratios during ÷ before and after ÷ before;</li>
 *   <li>the entries run more than once (every execution is counted by the id the payload carries), of the healthy
 *       partitions by when the second run came (during the stop or after it), and of the stopped master's partitions
 *       (allowed: what was sent to it runs when it answers);</li>
 *   <li>end to end: every publish that returned an id is handled, and nothing is left pending.</li>
 * </ul>
 *
 * <p>Each healthy entry run twice is printed with every run of it (when, its delivery count, the thread) and the
 * claims the keep-alive reported lost, so that a report says which path brought it a second time.
 */
final class HungMasterScenario {

    static final int MASTERS = 3;
    static final int PARTITIONS = 6;
    /** Keyed messages per second published to each partition. */
    static final int RATE = 500;
    static final int CONCURRENCY = 8;
    /** How long the master stays stopped: three times the cluster's node timeout. */
    static final Duration STOP = Duration.ofSeconds(15);
    static final String UNORDERED = "unordered";
    static final String ORDERED = "ordered";
    static final List<String> MODES = List.of(UNORDERED, ORDERED);
    private static final String TOPIC = "t";
    private static final String GROUP = "g";
    private static final int KEYS_PER_PARTITION = 50;
    /** The stretch of the stop whose slowest pace is reported, in seconds. */
    static final int SLOWEST_SECONDS = 3;
    /** How long a round waits, once publishing stopped, for every entry to be handled and nothing to be pending. */
    private static final Duration SETTLE = Duration.ofSeconds(120);

    /**
     * One round of one mode. Rates are first handlings (and returned publishes) per second of the healthy partitions
     * in the window before the stop, during it and after it. {@code twiceHealthyDuring} and {@code twiceHealthyAfter}:
     * entries of the healthy partitions whose second run came during the stop or after it; {@code twiceStopped}: the
     * stopped master's partitions' entries run more than once. {@code unhandled}: publishes that returned an id and
     * whose entry never ran (-1 when the round failed). {@code slowestDuring}: the healthy partitions' first handlings
     * per second in the slowest {@value #SLOWEST_SECONDS} s of the stop; {@code longestWaitMillis}: the longest an
     * entry of theirs published during the stop waited from its publish's return to its first run.
     * {@code topologyReadsPerSecond}: CLUSTER NODES calls per second that each healthy master answered during the stop
     * (the clients' topology refreshes); {@code gcMillisPerSecond}: this JVM's garbage collection time per second of
     * the stop (the benchmark's publishers and the consumer share it).
     * {@code redeliveredHealthy}: entries of the healthy partitions run with a delivery count above 1 (taken over or
     * re-read, not read as new), whether or not they ran twice. {@code twiceHealthyBefore}, a second run before the
     * stop, should not happen at all. {@code loadAverage}: the host's one-minute load at the start.
     */
    record Round(double loadAverage, double before, double during, double after, double slowestDuring,
                 double longestWaitMillis, double publishedBefore, double publishedDuring, double publishedAfter,
                 double topologyReadsPerSecond, double gcMillisPerSecond, int twiceHealthyBefore,
                 int twiceHealthyDuring, int twiceHealthyAfter, int twiceStopped, int redeliveredHealthy, long published,
                 long unhandled, long leftPending, long uncertain, int claimsLost, int loopErrors) implements java.io.Serializable {

        static final Round FAILED = new Round(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);

        boolean failed() {
            return published < 0;
        }

        double duringRatio() {
            return during / before;
        }

        double afterRatio() {
            return after / before;
        }

        /** The slowest {@value #SLOWEST_SECONDS} s of the stop against before: a backlog caught up later hides in during. */
        double slowestRatio() {
            return slowestDuring / before;
        }

        /** Entries of the healthy partitions run more than once, NaN when the round failed. */
        double twiceHealthy() {
            return failed() ? Double.NaN : twiceHealthyBefore + twiceHealthyDuring + twiceHealthyAfter;
        }

        /** Whether every entry published was handled and nothing was left pending. */
        boolean endToEnd() {
            return !failed() && unhandled == 0 && leftPending == 0;
        }
    }

    /** The setting and, per mode, the rounds. */
    record Result(int masters, int partitions, int rate, int concurrency, long stopMillis, long nodeTimeoutMillis,
                  long windowMillis, List<Round> unordered, List<Round> ordered) implements java.io.Serializable {

        List<Round> rounds(String mode) {
            return ORDERED.equals(mode) ? ordered : unordered;
        }

        List<Double> values(String mode, ToDoubleFunction<Round> f) {
            List<Double> out = new ArrayList<>();
            rounds(mode).forEach(r -> out.add(r.failed() ? Double.NaN : f.applyAsDouble(r)));
            return out;
        }
    }

    private HungMasterScenario() {
    }

    static Result run(Env env) throws Exception {
        Duration window = Duration.ofSeconds(env.options.quick() ? 5 : 10);
        Map<String, List<Round>> rounds = new LinkedHashMap<>();
        MODES.forEach(m -> rounds.put(m, new ArrayList<>()));
        try (LocalRedis cluster = LocalRedis.cluster(MASTERS, "--cluster-require-full-coverage", "no")) {
            Progress.say("hung-master: %d masters without replicas (ports %s, node timeout %d ms); %d partitions, %d"
                    + " msg/s each, stop %d s, windows %d s", MASTERS, cluster.ports(),
                    LocalRedis.NODE_TIMEOUT_MILLIS, PARTITIONS, RATE, STOP.toSeconds(), window.toSeconds());
            for (int round = 0; round < env.options.repeats(); round++) {
                for (String mode : env.order.of(MODES, "hung-master", round, m -> m)) {
                    Round r;
                    try {
                        cluster.awaitHealthy();
                        r = new Measurement(env, cluster, ORDERED.equals(mode), window).run();
                    } catch (RuntimeException e) {
                        Progress.say("  hung-master %s failed: %s", mode, e);
                        r = Round.FAILED;
                    } finally {
                        cluster.flushAll();
                    }
                    rounds.get(mode).add(r);
                    Progress.say("hung-master round %d/%d, %-9s load %.1f; healthy partitions %s before, %s during"
                            + " (%s; slowest %d s %s), %s after (%s) handled/s, longest wait %.0f ms; CLUSTER NODES"
                            + " %.1f/s per healthy master, GC %.0f ms/s during the stop; healthy run twice: %d before,"
                            + " %d during, %d after; stopped master's run twice: %d; healthy redelivered %d; %,d"
                            + " published, %d unhandled, %d left pending, %d uncertain; claims lost %d, loop errors %d",
                            round + 1, env.options.repeats(), mode, r.loadAverage(), Fmt.rate(r.before()),
                            Fmt.rate(r.during()), Fmt.ratio(r.duringRatio()), SLOWEST_SECONDS,
                            Fmt.ratio(r.slowestRatio()), Fmt.rate(r.after()), Fmt.ratio(r.afterRatio()),
                            r.longestWaitMillis(), r.topologyReadsPerSecond(), r.gcMillisPerSecond(),
                            r.twiceHealthyBefore(), r.twiceHealthyDuring(), r.twiceHealthyAfter(), r.twiceStopped(),
                            r.redeliveredHealthy(), r.published(), r.unhandled(), r.leftPending(), r.uncertain(),
                            r.claimsLost(), r.loopErrors());
                }
            }
        }
        return new Result(MASTERS, PARTITIONS, RATE, CONCURRENCY, STOP.toMillis(), LocalRedis.NODE_TIMEOUT_MILLIS,
                window.toMillis(), rounds.get(UNORDERED), rounds.get(ORDERED));
    }

    /** The one-minute load average of the host, NaN where there is none to read. */
    static double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (Exception e) {
            return Double.NaN;
        }
    }

    /** The first {@code each} keys {@code key-<n>} that fall into {@code partition}. */
    private static List<String> keysOf(int partition, int each) {
        List<String> keys = new ArrayList<>(each);
        for (int n = 0; keys.size() < each; n++) {
            if (Partitioner.partitionOf("key-" + n, PARTITIONS) == partition) {
                keys.add("key-" + n);
            }
        }
        return keys;
    }

    /** Every run of one entry: when (System.nanoTime), with which delivery count, on which thread. */
    private static final class Runs {
        final int partition;
        final String streamId;
        final List<long[]> when = new ArrayList<>(1);
        final List<String> how = new ArrayList<>(1);
        /** The highest delivery count a run of it had: above 1, it was taken over or re-read, not read as new. */
        long maxDeliveries;

        Runs(int partition, String streamId) {
            this.partition = partition;
            this.streamId = streamId;
        }

        synchronized void add(long now, Delivery d) {
            when.add(new long[] {now});
            maxDeliveries = Math.max(maxDeliveries, d.deliveryCount());
            how.add("deliveries " + d.deliveryCount() + (d.fencingToken() > 0 ? ", token " + d.fencingToken() : "")
                    + ", " + Thread.currentThread().getName());
        }

        synchronized int count() {
            return when.size();
        }

        synchronized long at(int run) {
            return when.get(run)[0];
        }

        synchronized String describe(long origin) {
            List<String> out = new ArrayList<>();
            for (int i = 0; i < when.size(); i++) {
                out.add(String.format(Locale.ROOT, "%+.3f s (%s)", (when.get(i)[0] - origin) / 1e9, how.get(i)));
            }
            return String.join("; ", out);
        }
    }

    /** What the bus reported: claims it lost (by qualified id, when), and loop errors (counted, the first few kept). */
    private static final class Events implements BusListener {
        final Map<String, Long> claimLost = new ConcurrentHashMap<>();
        final AtomicLong loopErrors = new AtomicLong();
        final Map<String, String> firstErrorByLoop = new ConcurrentHashMap<>();

        @Override
        public void onClaimLost(String topic, String group, String consumer, List<String> streamIds) {
            long now = System.nanoTime();
            streamIds.forEach(id -> claimLost.putIfAbsent(id, now));
        }

        @Override
        public void onLoopError(String loop, Throwable error) {
            loopErrors.incrementAndGet();
            String kind = loop.replaceAll("[0-9]", "#");
            if (firstErrorByLoop.size() < 20) {
                firstErrorByLoop.putIfAbsent(kind, String.valueOf(error));
            }
        }
    }

    /** One round of one mode, on a key prefix of its own. */
    private static final class Measurement {
        private final Env env;
        private final LocalRedis cluster;
        private final boolean ordered;
        private final Duration window;
        private final Map<String, Runs> runs = new ConcurrentHashMap<>();
        /** When each publish that returned an id returned, by the id the payload carries. */
        private final Map<String, Long> published = new ConcurrentHashMap<>();
        private final Set<String> uncertain = ConcurrentHashMap.newKeySet();
        private final Events events = new Events();
        private final List<Thread> publishers = new ArrayList<>();
        private volatile boolean publishing = true;
        private double topologyReadsPerSecond = Double.NaN;
        private double gcMillisPerSecond = Double.NaN;

        Measurement(Env env, LocalRedis cluster, boolean ordered, Duration window) {
            this.env = env;
            this.cluster = cluster;
            this.ordered = ordered;
            this.window = window;
        }

        Round run() {
            double load = loadAverage();
            String prefix = env.prefix("hung-" + env.nextId());
            Bus bus = Bus.connect(BusConfig.builder(cluster.url()).keyPrefix(prefix).partitions(TOPIC, PARTITIONS)
                    .listener(events).build());
            try {
                SubscribeOptions.Builder options = SubscribeOptions.builder().concurrency(CONCURRENCY);
                SubscribeOptions o = (ordered ? options.ordered(true) : options).build();
                bus.subscribe(TOPIC, GROUP, "c0", this::handle, o);
                List<String> streams = new ArrayList<>();
                for (Inspector.PartitionInfo p : bus.inspector().partitions(TOPIC, GROUP)) {
                    streams.add(p.streamKey());
                }
                int topicMaster = cluster.masterIndexOf("{" + TOPIC + "}");
                List<Integer> masterOf = new ArrayList<>();
                streams.forEach(s -> masterOf.add(cluster.masterIndexOf(s)));
                int victim = masterOf.stream().filter(m -> m != topicMaster).findFirst().orElseThrow();
                List<Integer> healthy = new ArrayList<>();
                for (int p = 0; p < PARTITIONS; p++) {
                    if (masterOf.get(p) != victim) {
                        healthy.add(p);
                    }
                }
                for (int p = 0; p < PARTITIONS; p++) {
                    startPublisher(bus, p, keysOf(p, KEYS_PER_PARTITION));
                }
                awaitEveryPartition(healthy);
                Env.sleep(window.toMillis()); // warm-up, then the window before the stop
                Env.sleep(window.toMillis());
                LocalRedis.Node node = cluster.nodes().get(victim);
                long topologyReads = -clusterNodesCalls(victim);
                long gc = -gcMillis();
                long stoppedAt = System.nanoTime();
                node.pause();
                long resumedAt;
                try {
                    Env.sleep(STOP.toMillis());
                } finally {
                    node.resume();
                    resumedAt = System.nanoTime();
                }
                topologyReads += clusterNodesCalls(victim);
                gc += gcMillis();
                double stopSeconds = (resumedAt - stoppedAt) / 1e9;
                topologyReadsPerSecond = topologyReads / (MASTERS - 1.0) / stopSeconds;
                gcMillisPerSecond = gc / stopSeconds;
                Env.sleep(window.toMillis());
                long publishedUntil = System.nanoTime();
                stopPublishers();
                long leftPending = settle(streams);
                return figures(load, victim, healthy, stoppedAt, resumedAt, publishedUntil, leftPending);
            } finally {
                publishing = false;
                bus.close();
            }
        }

        /** CLUSTER NODES calls the masters other than {@code victim} answered so far. */
        private long clusterNodesCalls(int victim) {
            long n = 0;
            for (int i = 0; i < MASTERS; i++) {
                if (i != victim) {
                    n += ServerCounters.parse(cluster.nodes().get(i).call(r -> r.info("commandstats"))).calls()
                            .getOrDefault("cluster|nodes", 0L);
                }
            }
            return n;
        }

        private static long gcMillis() {
            long n = 0;
            for (java.lang.management.GarbageCollectorMXBean gc
                    : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
                n += Math.max(0, gc.getCollectionTime());
            }
            return n;
        }

        private void handle(Delivery d) {
            String id = new String(d.message().payload(), StandardCharsets.UTF_8);
            runs.computeIfAbsent(id, k -> new Runs(partitionOf(k), d.streamId())).add(System.nanoTime(), d);
        }

        /** Publishes {@value #RATE} messages a second to partition {@code p}, each on its own key in turn. */
        private void startPublisher(Bus bus, int p, List<String> keys) {
            Thread t = new Thread(() -> {
                long period = TimeUnit.SECONDS.toNanos(1) / RATE;
                long next = System.nanoTime();
                for (int seq = 0; publishing; seq++) {
                    String id = "p" + p + "-" + seq;
                    Message m = Message.builder("bench", id.getBytes(StandardCharsets.UTF_8))
                            .key(keys.get(seq % keys.size())).build();
                    try {
                        bus.publisher().publish(TOPIC, m);
                        published.put(id, System.nanoTime());
                    } catch (RunbusException e) {
                        uncertain.add(id); // sent while its master was stopped: appended or not
                    }
                    next += period;
                    long wait = next - System.nanoTime();
                    if (wait < -TimeUnit.SECONDS.toNanos(1)) {
                        next = System.nanoTime(); // after a publish that waited for a stopped master: no burst
                    }
                    LockSupport.parkNanos(wait); // pacing
                }
            }, "hung-master-publisher-" + p);
            t.setDaemon(true);
            publishers.add(t);
            t.start();
        }

        private void stopPublishers() {
            publishing = false;
            for (Thread t : publishers) {
                try {
                    t.join(TimeUnit.MINUTES.toMillis(1));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                }
            }
        }

        private void awaitEveryPartition(List<Integer> healthy) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (healthy.stream().anyMatch(p -> runs.values().stream().noneMatch(r -> r.partition == p))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("a healthy partition handled nothing within 60 s");
                }
                Env.sleep(50);
            }
        }

        /**
         * Waits until every publish that returned an id was handled and no partition has anything pending (so that
         * nothing can run again), up to {@link #SETTLE}; returns the entries left pending then.
         */
        private long settle(List<String> streams) {
            long deadline = System.nanoTime() + SETTLE.toNanos();
            long pending = -1;
            while (System.nanoTime() < deadline) {
                if (runs.keySet().containsAll(published.keySet()) && (pending = pending(streams)) == 0) {
                    return 0;
                }
                Env.sleep(100);
            }
            return pending < 0 ? pending(streams) : pending;
        }

        private long pending(List<String> streams) {
            long n = 0;
            for (String s : streams) {
                n += cluster.nodes().get(cluster.masterIndexOf(s)).call(r -> r.xpending(s, GROUP)).getCount();
            }
            return n;
        }

        private Round figures(double load, int victim, List<Integer> healthy, long stoppedAt, long resumedAt,
                              long publishedUntil, long leftPending) {
            long w = window.toNanos();
            long beforeFrom = stoppedAt - w;
            long afterTo = Math.min(resumedAt + w, publishedUntil);
            Map<String, Runs> healthyRuns = new TreeMap<>();
            int twiceBefore = 0;
            int twiceDuring = 0;
            int twiceAfter = 0;
            int twiceStopped = 0;
            int redelivered = 0;
            long[] handled = new long[3];
            for (Map.Entry<String, Runs> e : runs.entrySet()) {
                Runs r = e.getValue();
                boolean isHealthy = healthy.contains(r.partition);
                if (isHealthy && r.maxDeliveries > 1) {
                    redelivered++;
                }
                if (isHealthy) {
                    long first = r.at(0);
                    count(handled, first, beforeFrom, stoppedAt, resumedAt, afterTo);
                }
                if (r.count() > 1) {
                    if (!isHealthy) {
                        twiceStopped++;
                        continue;
                    }
                    healthyRuns.put(e.getKey(), r);
                    if (r.at(1) - stoppedAt < 0) {
                        twiceBefore++;
                    } else if (r.at(1) - resumedAt < 0) {
                        twiceDuring++;
                    } else {
                        twiceAfter++;
                    }
                }
            }
            long[] sent = new long[3];
            published.forEach((id, at) -> {
                if (healthy.contains(partitionOf(id))) {
                    count(sent, at, beforeFrom, stoppedAt, resumedAt, afterTo);
                }
            });
            Set<String> unhandled = new java.util.HashSet<>(published.keySet());
            unhandled.removeAll(runs.keySet());
            healthyRuns.forEach((id, r) -> {
                Long lost = events.claimLost.get(r.streamId);
                Progress.say("  healthy %s (%s) ran %d times, from the stop: %s%s", id, r.streamId, r.count(),
                        r.describe(stoppedAt), lost == null ? "" : String.format(Locale.ROOT,
                                "; claim lost reported %+.3f s", (lost - stoppedAt) / 1e9));
            });
            if (!unhandled.isEmpty()) {
                Progress.say("  unhandled: %s", unhandled.stream().sorted().limit(20).toList());
            }
            events.firstErrorByLoop.forEach((loop, error) -> Progress.say("  loop error %s: %s", loop, error));
            Progress.say("  victim master %d (partitions %s), healthy partitions %s; healthy first handlings per second"
                    + " from %d s before the stop: %s", victim, stoppedPartitions(healthy), healthy,
                    window.toSeconds(), perSecond(healthy, beforeFrom, afterTo));
            Progress.say("  healthy published/s before %.0f, during %.0f, after %.0f", sent[0] / (w / 1e9),
                    sent[1] / ((resumedAt - stoppedAt) / 1e9), sent[2] / ((afterTo - resumedAt) / 1e9));
            long[] bySecond = perSecondCounts(healthy, stoppedAt, resumedAt);
            long slowest = Long.MAX_VALUE;
            for (int i = 0; i + SLOWEST_SECONDS <= bySecond.length; i++) {
                long sum = 0;
                for (int j = i; j < i + SLOWEST_SECONDS; j++) {
                    sum += bySecond[j];
                }
                slowest = Math.min(slowest, sum);
            }
            long longestWait = 0;
            for (Map.Entry<String, Long> e : published.entrySet()) {
                long at = e.getValue();
                Runs r = runs.get(e.getKey());
                if (r != null && healthy.contains(r.partition) && at - stoppedAt >= 0 && at - resumedAt < 0) {
                    longestWait = Math.max(longestWait, r.at(0) - at);
                }
            }
            double windowSeconds = w / 1e9;
            double stopSeconds = (resumedAt - stoppedAt) / 1e9;
            double afterSeconds = (afterTo - resumedAt) / 1e9;
            return new Round(load, handled[0] / windowSeconds, handled[1] / stopSeconds, handled[2] / afterSeconds,
                    slowest == Long.MAX_VALUE ? Double.NaN : (double) slowest / SLOWEST_SECONDS, longestWait / 1e6,
                    sent[0] / windowSeconds, sent[1] / stopSeconds, sent[2] / afterSeconds, topologyReadsPerSecond,
                    gcMillisPerSecond, twiceBefore, twiceDuring, twiceAfter, twiceStopped, redelivered, published.size(),
                    unhandled.size(), leftPending, uncertain.size(), events.claimLost.size(),
                    (int) events.loopErrors.get());
        }

        /** Counts {@code at} into before [0], during [1] or after [2], or nowhere when outside the three windows. */
        private static void count(long[] into, long at, long beforeFrom, long stoppedAt, long resumedAt, long afterTo) {
            if (at - beforeFrom >= 0 && at - stoppedAt < 0) {
                into[0]++;
            } else if (at - stoppedAt >= 0 && at - resumedAt < 0) {
                into[1]++;
            } else if (at - resumedAt >= 0 && at - afterTo < 0) {
                into[2]++;
            }
        }

        private static List<Integer> stoppedPartitions(List<Integer> healthy) {
            List<Integer> out = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                if (!healthy.contains(p)) {
                    out.add(p);
                }
            }
            return out;
        }

        /** The healthy partitions' first handlings in each second from {@code from} to {@code to}. */
        private String perSecond(List<Integer> healthy, long from, long to) {
            List<String> out = new ArrayList<>();
            for (long c : perSecondCounts(healthy, from, to)) {
                out.add(Long.toString(c));
            }
            return String.join(" ", out);
        }

        private long[] perSecondCounts(List<Integer> healthy, long from, long to) {
            int seconds = (int) ((to - from) / 1_000_000_000L);
            long[] counts = new long[Math.max(0, seconds)];
            runs.values().forEach(r -> {
                if (healthy.contains(r.partition)) {
                    long s = (r.at(0) - from) / 1_000_000_000L;
                    if (r.at(0) - from >= 0 && s < counts.length) {
                        counts[(int) s]++;
                    }
                }
            });
            return counts;
        }

        private static int partitionOf(String id) {
            return Integer.parseInt(id.substring(1, id.indexOf('-')));
        }
    }
}
