package dev.runbus.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The targets, checked against one run's results. Where a target compares runbus with something measured
 * beside it, the comparison is per round, and the verdict looks at the range of the rounds ({@link Verdict}).
 */
final class Targets {

    /** One target: what it asks, what was measured, and the verdict. */
    record Check(String target, String measured, Verdict verdict) {
    }

    /** On Redis 8.2 and later, runbus's drain on the server's own commands ÷ on the path older servers get. */
    static final double REDIS8_PATH_DRAIN = 1.15;
    /** On Redis 8.2 and later, the other figures on the server's own path ÷ on the older path: no worse. */
    static final double REDIS8_PATH_NO_WORSE = 1.0;

    /** The drain on the local cluster may not fall below this share of the drain on one node. */
    static final double CLUSTER_VS_SINGLE = 0.7;

    /** Delayed entries scheduled by another process: p99 of (delivered − due) at most this, in ms. */
    static final long DELAY_P99_LIMIT_MS = 50;

    /** Memory may not grow by more than this from the first quarter to the end. */
    static final double MEMORY_GROWTH_LIMIT_MB = 5;

    /** runbus's runs per second against the set-based PostgreSQL reference of the same writes. */
    static final double RUNS_VS_REFERENCE = 0.6;

    /** A hung master's neighbours: their partitions' throughput during and after the stop, against before. */
    static final double HUNG_MASTER_PACE = 0.9;

    private Targets() {
    }

    static List<Check> evaluate(Results r) {
        List<Check> out = new ArrayList<>();
        if (r.drain != null) {
            drain(out, r.drain);
        }
        if (r.latency != null) {
            latency(out, r.latency);
        }
        if (r.runs != null) {
            runs(out, r.runs);
        }
        if (r.recovery != null) {
            RecoveryScenario.Result x = r.recovery;
            double bound = (x.minIdleMillis() + 2 * x.claimIntervalMillis()) / 1000.0;
            Stats.Summary t = Stats.of(x.seconds());
            out.add(new Check("recovery ≤ minIdle + 2 × claim interval = " + Fmt.seconds(bound) + " (every round)",
                    Fmt.summary(t, Fmt::seconds), Verdict.everyRound(t, x.seconds().size(), false, bound)));
            if (!x.olderPathSeconds().isEmpty()) {
                Stats.Summary ratio = Stats.pairedRatio(x.seconds(), x.olderPathSeconds());
                out.add(new Check("recovery on Redis 8's path ≤ " + Fmt.ratio(1 / REDIS8_PATH_NO_WORSE)
                        + " the 8.0 path's time", Fmt.summary(ratio, Fmt::ratio),
                        Verdict.atMost(ratio, 1 / REDIS8_PATH_NO_WORSE)));
            }
        }
        if (r.poison != null) {
            Stats.Summary ratio = Stats.pairedRatio(r.poison.deadLettered(), r.poison.clean());
            Stats.Summary retried = Stats.pairedRatio(r.poison.retried(), r.poison.clean());
            // cost = 1 − ratio: at most 3 % is a ratio of at least 0.97
            out.add(new Check("1% poison costs ≤ 3% of throughput (dead-lettered at once)",
                    Fmt.percent(1 - ratio.median()) + " (" + Fmt.percent(1 - ratio.max()) + "–"
                    + Fmt.percent(1 - ratio.min()) + "; left for a retry: " + Fmt.percent(1 - retried.median()) + ")",
                    Verdict.atLeast(ratio, 0.97)));
        }
        if (r.memory != null) {
            memory(out, r.memory);
        }
        if (r.ordered != null) {
            ordered(out, r.ordered);
        }
        if (r.cluster != null) {
            ClusterScenario.Result x = r.cluster;
            Stats.Summary ratio = Stats.pairedRatio(x.cluster(ClusterScenario.Sample::rate),
                    x.single(ClusterScenario.Sample::rate));
            out.add(new Check("drain on a " + x.masters() + "-master cluster (" + x.partitions() + " partitions, C = "
                    + x.consumers() + ") ≥ " + Fmt.ratio(CLUSTER_VS_SINGLE) + " one node",
                    Fmt.summary(ratio, Fmt::ratio), Verdict.atLeast(ratio, CLUSTER_VS_SINGLE)));
        }
        if (r.delay != null) {
            delay(out, r.delay);
        }
        if (r.hungMaster != null) {
            hungMaster(out, r.hungMaster);
        }
        if (r.redis8 != null) {
            redis8(out, r.redis8);
        }
        if (r.flow != null) {
            flow(out, r.flow);
        }
        return out;
    }

    /** Issue targets of flow control (docs/flow-control.md). */
    private static void flow(List<Check> out, FlowScenario.Result x) {
        List<Double> gated = x.gated().stream().map(FlowScenario.Drain::drainRate).toList();
        List<Double> ungated = x.ungated().stream().map(FlowScenario.Drain::drainRate).toList();
        Stats.Summary drain = Stats.pairedRatio(gated, ungated);
        out.add(new Check("drain under flow key caps at C=" + FlowMeasures.CONCURRENCY + " ≥ 0.85× ungated",
                Fmt.summary(drain, Fmt::ratio), Verdict.atLeast(drain, 0.85)));
        Stats.Summary ratio = Stats.of(x.shares().stream().map(FlowScenario.Shares::maxOverMin).toList());
        out.add(new Check("shares at 100:1, worst window max/min ≤ 1.10", Fmt.summary(ratio,
                v -> String.format(java.util.Locale.ROOT, "%.3f", v)), Verdict.atMost(ratio, 1.10)));
        Stats.Summary jain = Stats.of(x.shares().stream().map(FlowScenario.Shares::jain).toList());
        out.add(new Check("shares at 100:1, worst window Jain ≥ 0.99", Fmt.summary(jain,
                v -> String.format(java.util.Locale.ROOT, "%.4f", v)), Verdict.atLeast(jain, 0.99)));
        Stats.Summary subRatio = Stats.of(x.sharesOverSubKeys().stream().map(FlowScenario.Shares::maxOverMin).toList());
        out.add(new Check("shares at 100:1, the heavy tenant over " + String.format(java.util.Locale.ROOT, "%,d",
                FlowMeasures.HEAVY_SUB_KEYS) + " sub-keys, worst window max/min ≤ 1.10", Fmt.summary(subRatio,
                v -> String.format(java.util.Locale.ROOT, "%.3f", v)), Verdict.atMost(subRatio, 1.10)));
        Stats.Summary light = Stats.of(x.fair().stream().map(FlowScenario.Fairness::lightP99).toList());
        out.add(new Check("light tenant's wait p99 ≤ 50 ms beside a backlogged heavy one", Fmt.summary(light, Fmt::ms)
                + " ms", Verdict.atMost(light, 50)));
        Stats.Summary rate = Stats.pairedRatio(x.fair().stream().map(FlowScenario.Fairness::rate).toList(),
                x.unfair().stream().map(FlowScenario.Fairness::rate).toList());
        out.add(new Check("throughput with fair shares ≥ 0.95× first come first served", Fmt.summary(rate, Fmt::ratio),
                Verdict.atLeast(rate, 0.95)));
    }

    private static void redis8(List<Check> out, Redis8Scenario.Result x) {
        Stats.Summary batch = Stats.pairedRatio(x.batchRates().get(Redis8Scenario.OWN),
                x.batchRates().get(Redis8Scenario.OLDER));
        out.add(new Check("publishAll on Redis 8's path ≥ " + Fmt.ratio(REDIS8_PATH_NO_WORSE) + " the 8.0 path's",
                Fmt.summary(batch, Fmt::ratio), Verdict.atLeast(batch, REDIS8_PATH_NO_WORSE)));
        Stats.Summary single = Stats.pairedRatio(x.singleRates().get(Redis8Scenario.OWN),
                x.singleRates().get(Redis8Scenario.OLDER));
        out.add(new Check("publish one at a time on Redis 8's path ≥ " + Fmt.ratio(REDIS8_PATH_NO_WORSE)
                + " the 8.0 path's", Fmt.summary(single, Fmt::ratio), Verdict.atLeast(single, REDIS8_PATH_NO_WORSE)));
        Stats.Summary retention = Stats.pairedRatio(x.retentionMillis().get(Redis8Scenario.OWN),
                x.retentionMillis().get(Redis8Scenario.OLDER));
        out.add(new Check("retention round's time on Redis 8's path ≤ " + Fmt.ratio(1 / REDIS8_PATH_NO_WORSE)
                + " the 8.0 path's", Fmt.summary(retention, Fmt::ratio),
                Verdict.atMost(retention, 1 / REDIS8_PATH_NO_WORSE)));
    }

    private static void drain(List<Check> out, DrainScenario.Result d) {
        // The Lettuce loop waits on every round trip; a bus that overlaps them can pass it from C = 4 on.
        drainEveryRound(out, d, RunbusContender.NAME, 1, 1.0);
        drainVs(out, d, RunbusContender.NAME, 4, LettuceLoopContender.NAME, 1.2);
        drainVs(out, d, RunbusContender.NAME, 16, LettuceLoopContender.NAME, 0.95);
        drainVs(out, d, RunbusContender.ONE_SUBSCRIPTION, 16, LettuceLoopContender.NAME, 0.95);
        drainVs(out, d, RunbusContender.NAME, 4, RedissonContender.NAME, 1.0);
        drainVs(out, d, RunbusContender.NAME, 4, SpringContender.NAME, 4.0);
        drainVs(out, d, RunbusContender.NAME, 4, JedisNaiveContender.NAME, 6.0);
        // On Redis 8.2 and later: the server's own commands against the path older servers get (issue target 1.15×).
        for (int c : d.consumerCounts()) {
            drainVs(out, d, RunbusContender.NAME, c, RunbusContender.OLDER_PATH, REDIS8_PATH_DRAIN);
        }
    }

    private static void drainEveryRound(List<Check> out, DrainScenario.Result d, String mine, int c, double factor) {
        if (!d.has(mine, c) || !d.has(LettuceLoopContender.NAME, c)) {
            return;
        }
        Stats.Summary ratio = Stats.pairedRatio(d.of(mine, c), d.of(LettuceLoopContender.NAME, c));
        out.add(new Check("drain at C=" + c + " ≥ " + Fmt.ratio(factor) + " " + LettuceLoopContender.NAME
                + " (every round)", Fmt.summary(ratio, Fmt::ratio),
                Verdict.everyRound(ratio, d.of(mine, c).size(), true, factor)));
    }

    private static void drainVs(List<Check> out, DrainScenario.Result d, String mine, int c, String other,
                                double factor) {
        if (!d.has(mine, c) || !d.has(other, c)) {
            return;
        }
        Stats.Summary ratio = Stats.pairedRatio(d.of(mine, c), d.of(other, c));
        String who = mine.equals(RunbusContender.NAME) ? "" : " (" + mine + ")";
        out.add(new Check("drain at C=" + c + who + " ≥ " + Fmt.ratio(factor) + " " + other,
                Fmt.summary(ratio, Fmt::ratio), Verdict.atLeast(ratio, factor)));
    }

    private static void latency(List<Check> out, LatencyScenario.Result l) {
        if (l.rates().contains(5_000)) {
            Stats.Summary p50 = Stats.of(l.values(5_000, RunbusContender.NAME, LatencyScenario.Sample::p50));
            out.add(new Check("latency at 5k msg/s: runbus p50 ≤ 1 ms", Fmt.summary(p50, Fmt::ms) + " ms",
                    Verdict.atMost(p50, 1.0)));
        }
        for (int rate : l.rates()) {
            if (!l.contenders().contains(LettuceLoopContender.NAME)) {
                break;
            }
            List<Double> mine = l.values(rate, RunbusContender.NAME, LatencyScenario.Sample::p99);
            Stats.Summary ratio = Stats.pairedRatio(mine,
                    l.values(rate, LettuceLoopContender.NAME, LatencyScenario.Sample::p99));
            out.add(new Check(String.format(Locale.ROOT, "latency at %,d msg/s: runbus p99 ÷ Lettuce loop p99 ≤ 1.00×"
                    + " (every round)", rate), Fmt.summary(ratio, Fmt::ratio),
                    Verdict.everyRound(ratio, mine.size(), false, 1.0)));
        }
        for (int rate : l.rates()) {
            if (!l.contenders().contains(RunbusContender.OLDER_PATH)) {
                break;
            }
            Stats.Summary ratio = Stats.pairedRatio(l.values(rate, RunbusContender.NAME, LatencyScenario.Sample::p99),
                    l.values(rate, RunbusContender.OLDER_PATH, LatencyScenario.Sample::p99));
            out.add(new Check(String.format(Locale.ROOT, "latency at %,d msg/s: runbus p99 ÷ its Redis 8.0 path's"
                    + " ≤ 1.00× (no worse on Redis 8)", rate), Fmt.summary(ratio, Fmt::ratio),
                    Verdict.atMost(ratio, 1.0)));
        }
    }

    private static void runs(List<Check> out, RunsScenario.Result x) {
        Stats.Summary ratio = Stats.pairedRatio(x.runbus(), x.bestReference());
        out.add(new Check("runs ≥ " + Fmt.ratio(RUNS_VS_REFERENCE) + " the set-based PostgreSQL reference (its best"
                + " connection count of the round)", Fmt.summary(ratio, Fmt::ratio),
                Verdict.atLeast(ratio, RUNS_VS_REFERENCE)));
        Stats.Summary tp = Stats.of(x.runbus());
        out.add(new Check("runs ≥ 20k runs/s (the moonshot)", Fmt.summary(tp, Fmt::rate) + " runs/s",
                Verdict.atLeast(tp, 20_000)));
        Stats.Summary naive = Stats.pairedRatio(x.runbus(), x.pgPerRun1());
        out.add(new Check("runs ≥ 7 × one transaction per run (the naive baseline)", Fmt.summary(naive, Fmt::ratio),
                Verdict.atLeast(naive, 7)));
        Stats.Summary p50 = Stats.of(x.p50());
        out.add(new Check("runs submit→done→ack p50 ≤ 5 ms at " + Fmt.rate(x.rate()) + " runs/s",
                Fmt.summary(p50, Fmt::ms) + " ms", Verdict.atMost(p50, 5)));
        Stats.Summary p99 = Stats.of(x.p99());
        out.add(new Check("runs submit→done→ack p99 ≤ 20 ms at " + Fmt.rate(x.rate()) + " runs/s",
                Fmt.summary(p99, Fmt::ms) + " ms", Verdict.atMost(p99, 20)));
    }

    private static void memory(List<Check> out, MemoryScenario.Result m) {
        Stats.Summary growth = Stats.of(memoryGrowth(m));
        out.add(new Check("heap does not grow with the message count (≤ " + Fmt.mb(MEMORY_GROWTH_LIMIT_MB)
                + " from the first quarter to the end)", Fmt.summary(growth, Fmt::mb),
                Verdict.atMost(growth, MEMORY_GROWTH_LIMIT_MB)));
        if (m.redisMb() != null) {
            Stats.Summary redis = Stats.of(redisGrowth(m));
            out.add(new Check("Redis used_memory stays flat with retention on (≤ " + Fmt.mb(MEMORY_GROWTH_LIMIT_MB)
                    + " from the first quarter to the end of " + String.format(Locale.ROOT, "%,d", m.messages())
                    + " messages)", Fmt.summary(redis, Fmt::mb), Verdict.atMost(redis, MEMORY_GROWTH_LIMIT_MB)));
        }
    }

    private static void ordered(List<Check> out, OrderedScenario.Result x) {
        Stats.Summary ratio = Stats.pairedRatio(x.ordered(), x.unordered());
        out.add(new Check("ordered drain (16 partitions, C = 4, no-op handler) ≥ 0.5 × unordered",
                Fmt.summary(ratio, Fmt::ratio), Verdict.atLeast(ratio, 0.5)));
        List<Double> ideal = new ArrayList<>();
        x.orderedSlow().forEach(v -> ideal.add(x.idealSlowRate()));
        Stats.Summary slow = Stats.pairedRatio(x.orderedSlow(), ideal);
        out.add(new Check("ordered drain, 1 ms handler ≥ 0.9 × partitions / 1 ms", Fmt.summary(slow, Fmt::ratio),
                Verdict.atLeast(slow, 0.9)));
        Stats.Summary t = Stats.of(x.rebalanceSeconds());
        double bound = x.leaseMillis() / 1000.0 + 1;
        out.add(new Check("rebalance after a SIGKILL ≤ lease + 1 s = " + Fmt.seconds(bound) + " (every round)",
                Fmt.summary(t, Fmt::seconds), Verdict.everyRound(t, x.rebalanceSeconds().size(), false, bound)));
    }

    private static void delay(List<Check> out, DelayScenario.Result x) {
        Stats.Summary p99 = Stats.of(DelayScenario.Result.values(x.polled(), DelayScenario.Lateness::p99));
        out.add(new Check("delayed delivery, scheduled by a process that does not subscribe: lateness p99 at "
                + Fmt.rate(x.rate()) + "/s ≤ " + DELAY_P99_LIMIT_MS + " ms (default poll " + x.pollMillis() + " ms)",
                Fmt.summary(p99, Fmt::ms) + " ms (poll " + x.fastPollMillis() + " ms: " + Fmt.summary(
                Stats.of(DelayScenario.Result.values(x.polledFast(), DelayScenario.Lateness::p99)), Fmt::ms)
                + " ms)", Verdict.atMost(p99, DELAY_P99_LIMIT_MS)));
        out.add(new Check("delayed delivery: no entry delivered before it is due", x.early() + " early",
                p99.isEmpty() ? Verdict.NOT_MEASURED : x.early() == 0 ? Verdict.MET : Verdict.MISSED));
    }

    private static void hungMaster(List<Check> out, HungMasterScenario.Result x) {
        for (String mode : HungMasterScenario.MODES) {
            int rounds = x.rounds(mode).size();
            if (rounds == 0) {
                continue;
            }
            Stats.Summary during = Stats.of(x.values(mode, HungMasterScenario.Round::duringRatio));
            Stats.Summary after = Stats.of(x.values(mode, HungMasterScenario.Round::afterRatio));
            out.add(new Check("one master hung, " + mode + ": the other masters' partitions keep ≥ "
                    + Fmt.ratio(HUNG_MASTER_PACE) + " of their throughput during the stop and after (every round)",
                    "during " + Fmt.summary(during, Fmt::ratio) + ", after " + Fmt.summary(after, Fmt::ratio),
                    worse(Verdict.everyRound(during, rounds, true, HUNG_MASTER_PACE),
                            Verdict.everyRound(after, rounds, true, HUNG_MASTER_PACE))));
            Stats.Summary twice = Stats.of(x.values(mode, HungMasterScenario.Round::twiceHealthy));
            List<Double> endToEnd = x.values(mode, r -> r.endToEnd() ? 1 : 0);
            out.add(new Check("one master hung, " + mode + ": 0 entries of the other masters' partitions run twice,"
                    + " every published entry handled (every round)", Fmt.rounds(x.values(mode,
                    HungMasterScenario.Round::twiceHealthy), v -> Double.isNaN(v) ? "—" : String.format(Locale.ROOT,
                    "%.0f", v)) + " run twice; every entry handled in " + endToEnd.stream().filter(v -> v == 1).count()
                    + " of " + rounds, worse(Verdict.everyRound(twice, rounds, false, 0),
                    Verdict.everyRound(Stats.of(endToEnd), rounds, true, 1))));
        }
    }

    /** The worse of two verdicts of one target. */
    private static Verdict worse(Verdict a, Verdict b) {
        return a.ordinal() >= b.ordinal() ? a : b;
    }

    /** Redis used_memory growth from the first quarter to the end, per round. */
    static List<Double> redisGrowth(MemoryScenario.Result m) {
        return growth(m.redisMb());
    }

    /** Heap growth from the first quarter to the end, per round. */
    static List<Double> memoryGrowth(MemoryScenario.Result m) {
        return growth(m.heapMb());
    }

    private static List<Double> growth(List<List<Double>> rounds) {
        List<Double> out = new ArrayList<>();
        for (List<Double> series : rounds) {
            out.add(series.size() < 3 ? Double.NaN : series.get(series.size() - 1) - series.get(1));
        }
        return out;
    }
}
