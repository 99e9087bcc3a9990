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
 * at most 10,000 published and unhandled); at each quarter, once everything is acknowledged and the stream is
 * trimmed, the used heap is sampled after a full GC. The series must stay flat: memory must not grow with
 * the number of messages.
 */
final class MemoryScenario {

    /** Heap in MB after warm-up and at each checkpoint, one list per round. */
    record Result(int messages, List<Integer> checkpoints, List<List<Double>> heapMb) implements java.io.Serializable {
    }

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
        RunbusContender runbus = new RunbusContender(env.options.redisUri(), env.prefix("memory"));
        try {
            for (int round = 0; round < env.options.repeats(); round++) {
                List<Double> series = once(env, runbus, checkpoints);
                heap.add(series);
                Progress.say("memory round %d/%d: used heap %s MB at %s messages", round + 1, env.options.repeats(),
                        format(series), checkpoints);
            }
        } finally {
            runbus.close();
        }
        return new Result(total, checkpoints, heap);
    }

    private static List<Double> once(Env env, RunbusContender runbus, List<Integer> checkpoints) throws Exception {
        Target t = env.target(runbus, "memory");
        env.admin.createGroup(t.streamKey(), t.group());
        Probe probe = Probe.counting();
        Subscription sub = runbus.subscribe(t, "memory-0", d -> probe.handled(),
                SubscribeOptions.builder().blockTime(Duration.ofMillis(100)).build());
        List<Double> series = new ArrayList<>();
        try {
            env.producer.publishWithBacklog(t.streamKey(), 0, WARMUP, BACKLOG, probe::handledCount);
            settle(env, probe, WARMUP, t);
            series.add(usedHeapMb());
            long published = WARMUP;
            for (int i = 1; i < checkpoints.size(); i++) {
                int n = checkpoints.get(i) - checkpoints.get(i - 1);
                env.producer.publishWithBacklog(t.streamKey(), published, n, BACKLOG, probe::handledCount);
                published += n;
                settle(env, probe, published, t);
                series.add(usedHeapMb());
            }
            return series;
        } finally {
            sub.close();
            env.admin.deleteMatching(t.keyPattern());
        }
    }

    /** Everything handled and acknowledged; the stream emptied so that Redis memory stays bounded too. */
    private static void settle(Env env, Probe probe, long n, Target t) throws Exception {
        env.awaitAcked(probe, n, t, 300_000);
        env.admin.trim(t.streamKey());
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
