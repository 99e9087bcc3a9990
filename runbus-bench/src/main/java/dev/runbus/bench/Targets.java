package dev.runbus.bench;

import java.util.ArrayList;
import java.util.List;

/** The targets, checked against one run's results. */
final class Targets {

    /** One target: what it asks, what was measured, and whether it was met (null: not measured). */
    record Check(String target, String measured, Boolean met) {

        String verdict() {
            return met == null ? "not measured" : met ? "met" : "**missed**";
        }
    }

    /** The drain on the local cluster may not fall below this share of the drain on one node. */
    static final double CLUSTER_VS_SINGLE = 0.7;

    /** Delayed entries scheduled by another process: p99 of (delivered − due) at most this, in ms. */
    static final long DELAY_P99_LIMIT_MS = 50;

    /** Memory may not grow by more than this from the first quarter to the end. */
    static final double MEMORY_GROWTH_LIMIT_MB = 5;

    private Targets() {
    }

    static List<Check> evaluate(Results r) {
        List<Check> out = new ArrayList<>();
        if (r.drain != null && r.drain.consumerCounts().contains(4)) {
            drain(out, r.drain, LettuceLoopContender.NAME, 0.9);
            drain(out, r.drain, RedissonContender.NAME, 1.0);
            drain(out, r.drain, SpringContender.NAME, 4.0);
            drain(out, r.drain, JedisNaiveContender.NAME, 6.0);
        }
        if (r.latency != null && r.latency.rates().contains(5_000)) {
            LatencyScenario.Result l = r.latency;
            Stats.Summary p50 = Stats.of(l.values(5_000, RunbusContender.NAME, LatencyScenario.Sample::p50));
            out.add(new Check("latency at 5k msg/s: runbus p50 ≤ 1 ms", Fmt.summary(p50, Fmt::ms) + " ms",
                    p50.isEmpty() ? null : p50.median() <= 1.0));
            Stats.Summary mine = Stats.of(l.values(5_000, RunbusContender.NAME, LatencyScenario.Sample::p99));
            Stats.Summary theirs = Stats.of(l.values(5_000, LettuceLoopContender.NAME, LatencyScenario.Sample::p99));
            out.add(new Check("latency at 5k msg/s: runbus p99 ≤ Lettuce loop p99",
                    Fmt.ms(mine.median()) + " ms vs " + Fmt.ms(theirs.median()) + " ms",
                    mine.isEmpty() || theirs.isEmpty() ? null : mine.median() <= theirs.median()));
        }
        if (r.runs != null) {
            RunsScenario.Result x = r.runs;
            Stats.Summary tp = Stats.of(x.runbus());
            out.add(new Check("runs ≥ 20k runs/s", Fmt.summary(tp, Fmt::rate) + " runs/s",
                    tp.isEmpty() ? null : tp.median() >= 20_000));
            Stats.Summary ratio = Stats.pairedRatio(x.runbus(), x.pgPerRun1());
            out.add(new Check("runs ≥ 7 × one transaction per run", Fmt.summary(ratio, Fmt::ratio),
                    ratio.isEmpty() ? null : ratio.median() >= 7));
            Stats.Summary p50 = Stats.of(x.p50());
            out.add(new Check("runs submit→done(→ack) p50 ≤ 10 ms at " + Fmt.rate(x.rate()) + " runs/s",
                    Fmt.summary(p50, Fmt::ms) + " ms", p50.isEmpty() ? null : p50.median() <= 10));
        }
        if (r.recovery != null) {
            RecoveryScenario.Result x = r.recovery;
            double bound = (x.minIdleMillis() + 2 * x.claimIntervalMillis()) / 1000.0;
            Stats.Summary t = Stats.of(x.seconds());
            out.add(new Check("recovery ≤ minIdle + 2 × claim interval = " + Fmt.seconds(bound) + " (every round)",
                    Fmt.summary(t, Fmt::seconds), t.isEmpty() ? null : t.max() <= bound && t.n() == x.seconds().size()));
        }
        if (r.poison != null) {
            Stats.Summary ratio = Stats.pairedRatio(r.poison.deadLettered(), r.poison.clean());
            Stats.Summary retried = Stats.pairedRatio(r.poison.retried(), r.poison.clean());
            double cost = 1 - ratio.median();
            out.add(new Check("1% poison costs ≤ 5% of throughput (dead-lettered at once)", Fmt.percent(cost)
                    + " (left for a retry: " + Fmt.percent(1 - retried.median()) + ")",
                    ratio.isEmpty() ? null : cost <= 0.05));
        }
        if (r.memory != null) {
            Stats.Summary growth = Stats.of(memoryGrowth(r.memory));
            out.add(new Check("heap does not grow with the message count (≤ " + Fmt.mb(MEMORY_GROWTH_LIMIT_MB)
                    + " from the first quarter to the end)", Fmt.summary(growth, Fmt::mb),
                    growth.isEmpty() ? null : growth.median() <= MEMORY_GROWTH_LIMIT_MB));
            if (r.memory.redisMb() != null) {
                Stats.Summary redis = Stats.of(redisGrowth(r.memory));
                out.add(new Check("Redis used_memory stays flat with retention on (≤ " + Fmt.mb(MEMORY_GROWTH_LIMIT_MB)
                        + " from the first quarter to the end of " + String.format(java.util.Locale.ROOT, "%,d",
                        r.memory.messages()) + " messages)", Fmt.summary(redis, Fmt::mb),
                        redis.isEmpty() ? null : redis.median() <= MEMORY_GROWTH_LIMIT_MB));
            }
        }
        if (r.ordered != null) {
            OrderedScenario.Result x = r.ordered;
            Stats.Summary ratio = Stats.pairedRatio(x.ordered(), x.unordered());
            out.add(new Check("ordered drain (16 partitions, C = 4, no-op handler) ≥ 0.5 × unordered",
                    Fmt.summary(ratio, Fmt::ratio), ratio.isEmpty() ? null : ratio.median() >= 0.5));
            List<Double> ideal = new ArrayList<>();
            x.orderedSlow().forEach(v -> ideal.add(x.idealSlowRate()));
            Stats.Summary slow = Stats.pairedRatio(x.orderedSlow(), ideal);
            out.add(new Check("ordered drain, 1 ms handler ≥ 0.9 × partitions / 1 ms", Fmt.summary(slow, Fmt::ratio),
                    slow.isEmpty() ? null : slow.median() >= 0.9));
            Stats.Summary t = Stats.of(x.rebalanceSeconds());
            double bound = x.leaseMillis() / 1000.0 + 1;
            out.add(new Check("rebalance after a SIGKILL ≤ lease + 1 s = " + Fmt.seconds(bound) + " (every round)",
                    Fmt.summary(t, Fmt::seconds), t.isEmpty() ? null : t.max() <= bound
                    && t.n() == x.rebalanceSeconds().size()));
        }
        if (r.cluster != null) {
            ClusterScenario.Result x = r.cluster;
            Stats.Summary ratio = Stats.pairedRatio(x.cluster(ClusterScenario.Sample::rate),
                    x.single(ClusterScenario.Sample::rate));
            out.add(new Check("drain on a " + x.masters() + "-master cluster (" + x.partitions() + " partitions, C = "
                    + x.consumers() + ") ≥ " + Fmt.ratio(CLUSTER_VS_SINGLE) + " one node",
                    Fmt.summary(ratio, Fmt::ratio), ratio.isEmpty() ? null : ratio.median() >= CLUSTER_VS_SINGLE));
        }
        if (r.delay != null) {
            DelayScenario.Result x = r.delay;
            Stats.Summary p99 = Stats.of(DelayScenario.Result.values(x.polled(), DelayScenario.Lateness::p99));
            out.add(new Check("delayed delivery, scheduled by a process that does not subscribe: lateness p99 at "
                    + Fmt.rate(x.rate()) + "/s ≤ " + DELAY_P99_LIMIT_MS + " ms (default poll " + x.pollMillis()
                    + " ms)",
                    Fmt.summary(p99, Fmt::ms) + " ms (poll " + x.fastPollMillis() + " ms: " + Fmt.summary(
                    Stats.of(DelayScenario.Result.values(x.polledFast(), DelayScenario.Lateness::p99)), Fmt::ms)
                    + " ms)", p99.isEmpty() ? null : p99.median() <= DELAY_P99_LIMIT_MS));
            out.add(new Check("delayed delivery: no entry delivered before it is due", x.early() + " early",
                    p99.isEmpty() ? null : x.early() == 0));
        }
        return out;
    }

    /** Per round: heap at the end minus heap after the first quarter. */
    /** Redis used_memory growth from the first quarter to the end, per round. */
    static List<Double> redisGrowth(MemoryScenario.Result m) {
        List<Double> out = new ArrayList<>();
        for (List<Double> series : m.redisMb()) {
            out.add(series.size() < 3 ? Double.NaN : series.get(series.size() - 1) - series.get(1));
        }
        return out;
    }

    static List<Double> memoryGrowth(MemoryScenario.Result m) {
        List<Double> out = new ArrayList<>();
        for (List<Double> series : m.heapMb()) {
            out.add(series.size() < 3 ? Double.NaN : series.get(series.size() - 1) - series.get(1));
        }
        return out;
    }

    private static void drain(List<Check> out, DrainScenario.Result d, String other, double factor) {
        if (!d.rates().containsKey(other)) {
            return;
        }
        Stats.Summary ratio = Stats.pairedRatio(d.of(RunbusContender.NAME, 4), d.of(other, 4));
        out.add(new Check("drain at C=4 ≥ " + Fmt.ratio(factor) + " " + other, Fmt.summary(ratio, Fmt::ratio),
                ratio.isEmpty() ? null : ratio.median() >= factor));
    }
}
