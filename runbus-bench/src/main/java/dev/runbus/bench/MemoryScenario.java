package dev.runbus.bench;

import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Scenario 6: one runbus subscription (default options) handles N messages at steady state (the producer keeps
 * at most 10,000 published and unhandled), on a bus whose retention trims what the group acknowledged
 * ({@code retentionAge} 0, every second: nothing trims the stream but retention). At each quarter, once
 * everything is acknowledged and retention trimmed it, the used heap is sampled after a full GC, and Redis's
 * {@code used_memory}. Both series must stay flat: memory must not grow with the number of messages.
 */
final class MemoryScenario {

    /** Heap in MB after warm-up and at each checkpoint, one list per round. */
    /**
     * Heap and Redis {@code used_memory} in MB after warm-up and at each checkpoint, one list per round;
     * {@code longestStream} the most entries the stream held at a checkpoint's sampling, per round (null in results
     * of runs before retention).
     */
    record Result(int messages, List<Integer> checkpoints, List<List<Double>> heapMb, List<List<Double>> redisMb,
                  List<Long> longestStream) implements java.io.Serializable {
    }

    /** How long the scenario waits for retention to trim what was acknowledged. */
    private static final long RETENTION_WAIT_MILLIS = 30_000;

    private static final int BACKLOG = 10_000;
    private static final int WARMUP = 20_000;

    private MemoryScenario() {
    }

    static Result run(Env env) throws Exception {
        int total = env.sizes.memoryMessages();
        List<Integer> checkpoints = new ArrayList<>();
        checkpoints.add(0);
        for (int q = 1; q <= 4; q++) {
            checkpoints.add(total / 4 * q);
        }
        List<List<Double>> heap = new ArrayList<>();
        List<List<Double>> redis = new ArrayList<>();
        List<Long> longest = new ArrayList<>();
        RunbusContender runbus = new RunbusContender(env.options.redisUri(), env.prefix("memory"), false,
                SubscribeOptions.DEFAULT_MAX_DELIVERIES, b -> b.retentionAge(Duration.ZERO)
                        .retentionInterval(Duration.ofSeconds(1)));
        try {
            for (int round = 0; round < env.options.repeats(); round++) {
                List<Double> heapSeries = new ArrayList<>();
                List<Double> redisSeries = new ArrayList<>();
                longest.add(once(env, runbus, checkpoints, heapSeries, redisSeries));
                heap.add(heapSeries);
                redis.add(redisSeries);
                Progress.say("memory round %d/%d: used heap %s MB, Redis used_memory %s MB at %s messages (stream at"
                        + " most %,d entries when sampled)", round + 1, env.options.repeats(), format(heapSeries),
                        format(redisSeries), checkpoints, longest.get(longest.size() - 1));
            }
        } finally {
            runbus.close();
        }
        return new Result(total, checkpoints, heap, redis, longest);
    }

    /** One round; returns the longest the stream was when a checkpoint was reached. */
    private static long once(Env env, RunbusContender runbus, List<Integer> checkpoints, List<Double> series,
                             List<Double> redisSeries) throws Exception {
        Target t = env.target(runbus, "memory");
        env.admin.createGroup(t.streamKey(), t.group());
        Probe probe = Probe.counting();
        Subscription sub = runbus.subscribe(t, "memory-0", d -> probe.handled(),
                SubscribeOptions.builder().blockTime(Duration.ofMillis(100)).build());
        long longest = 0;
        try {
            env.producer.publishWithBacklog(t.streamKey(), 0, WARMUP, BACKLOG, probe::handledCount);
            settle(env, probe, WARMUP, t);
            series.add(usedHeapMb());
            redisSeries.add(env.admin.usedMemory() / (1024.0 * 1024.0));
            long published = WARMUP;
            for (int i = 1; i < checkpoints.size(); i++) {
                int n = checkpoints.get(i) - checkpoints.get(i - 1);
                env.producer.publishWithBacklog(t.streamKey(), published, n, BACKLOG, probe::handledCount);
                published += n;
                longest = Math.max(longest, env.admin.length(t.streamKey()));
                settle(env, probe, published, t);
                series.add(usedHeapMb());
                redisSeries.add(env.admin.usedMemory() / (1024.0 * 1024.0));
            }
            return longest;
        } finally {
            sub.close();
            env.admin.deleteMatching(t.keyPattern());
        }
    }

    /**
     * Everything handled and acknowledged, and retention's next rounds trimmed it: the stream is empty (nothing
     * else trims it).
     */
    private static void settle(Env env, Probe probe, long n, Target t) throws Exception {
        env.awaitAcked(probe, n, t, 300_000);
        long deadline = System.currentTimeMillis() + RETENTION_WAIT_MILLIS;
        while (env.admin.length(t.streamKey()) > 0) {
            if (System.currentTimeMillis() > deadline) {
                throw new java.util.concurrent.TimeoutException("retention left " + env.admin.length(t.streamKey())
                        + " acknowledged entries in " + t.streamKey() + " for " + RETENTION_WAIT_MILLIS + " ms");
            }
            Env.sleep(50); // polling the stream's length while retention's loop runs
        }
    }

    static double usedHeapMb() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Env.sleep(100);
        }
        return memory.getHeapMemoryUsage().getUsed() / (1024.0 * 1024.0);
    }

    private static String format(List<Double> series) {
        StringBuilder b = new StringBuilder("[");
        for (Double d : series) {
            b.append(b.length() > 1 ? ", " : "").append(String.format(java.util.Locale.ROOT, "%.1f", d));
        }
        return b.append(']').toString();
    }
}
