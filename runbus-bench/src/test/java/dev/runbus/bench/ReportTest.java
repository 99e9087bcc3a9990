package dev.runbus.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReportTest {

    private static Results results() {
        BenchOptions options = BenchOptions.parse("--repeats", "3", "--out", "target/test-report.md");
        Results r = new Results(options, new Results.Machine(2, "cpu", "24 GiB RAM", "Linux", "JDK 17", "7.2", "15",
                "abc1234"));
        Map<String, Map<Integer, List<Double>>> rates = new LinkedHashMap<>();
        rates.put(RunbusContender.NAME, Map.of(4, List.of(120_000.0, 125_000.0, 130_000.0)));
        rates.put(LettuceLoopContender.NAME, Map.of(4, List.of(130_000.0, 125_000.0, 120_000.0)));
        rates.put(SpringContender.NAME, Map.of(4, List.of(30_000.0, 25_000.0, 28_000.0)));
        r.drain = new DrainScenario.Result(200_000, List.of(4), Map.of(RunbusContender.NAME, "runbus",
                LettuceLoopContender.NAME, "loop", SpringContender.NAME, "spring"), rates);
        r.recovery = new RecoveryScenario.Result(500, 2_000, 500, 666, List.of(2.1, 2.4, Double.NaN),
                List.of(10.0, 300.0, 650.0), List.of());
        r.cluster = new ClusterScenario.Result(3, 6, 4, 200_000, List.of(2, 2, 2),
                List.of(cluster(60_000), cluster(80_000), ClusterScenario.Sample.FAILED),
                List.of(single(100_000), single(100_000), single(90_000)));
        return r;
    }

    private static ClusterScenario.Sample cluster(double rate) {
        return new ClusterScenario.Sample(rate, 70_000, 0.17, Map.of("xreadgroup", 0.065, "xack", 0.096,
                "cluster|nodes", 0.0001), 4.7, 5.2, 13.0);
    }

    private static ClusterScenario.Sample single(double rate) {
        return new ClusterScenario.Sample(rate, 100_000, 0.09, Map.of("xreadgroup", 0.011, "xack", 0.077), 2.5, 2.0,
                6.0);
    }

    @Test
    void drainTableShowsMedianRangeAndPerRoundRatios() {
        String md = new Report(results(), Map.of("drain", "benchmarks-drain.png")).render();
        assertThat(md).contains("| **runbus** | **125k (120k–130k)** |");
        assertThat(md).contains("| Lettuce loop | 125k (120k–130k) |");
        // per-round ratios 120/130, 125/125, 130/120
        assertThat(md).contains("| runbus ÷ Lettuce loop | 1.00× (0.92×–1.08×) |");
        assertThat(md).contains("![Drain throughput](benchmarks-drain.png)");
    }

    @Test
    void targetsAreCheckedAgainstMedianRatios() {
        List<Targets.Check> checks = Targets.evaluate(results());
        // per round 0.92×, 1.00×, 1.08×: no round reaches 1.2×
        assertThat(checks).anySatisfy(c -> {
            assertThat(c.target()).isEqualTo("drain at C=4 ≥ 1.20× Lettuce loop");
            assertThat(c.verdict()).isEqualTo(Verdict.MISSED);
        });
        assertThat(checks).anySatisfy(c -> {
            assertThat(c.target()).contains("Spring");
            assertThat(c.verdict()).isEqualTo(Verdict.MET); // per round 4.0×, 5.0×, 4.6×
        });
        // a failed recovery round counts as a miss
        assertThat(checks).anySatisfy(c -> {
            assertThat(c.target()).startsWith("recovery");
            assertThat(c.verdict()).isEqualTo(Verdict.MISSED);
        });
    }

    @Test
    void clusterSectionComparesTheDeploymentsRoundByRound() {
        String md = new Report(results(), Map.of()).render();
        assertThat(md).contains("## 8. Redis Cluster");
        // per-round ratios 0.60 and 0.80; the failed cluster round is left out
        assertThat(md).contains("| **drain, msg/s** | 100k (90k–100k) | **70k (60k–80k)** | **0.70× (0.60×–0.80×)** |");
        assertThat(md).contains("| Redis commands per message | 0.090 | 0.170 | 1.89× |");
        assertThat(md).contains("| CPU per message, Redis + JVM | 8.5 µs | 17.7 µs | 2.08× |");
        assertThat(md).contains("| messages per XREADGROUP | 91 | 15 | 0.17× |");
        assertThat(md).contains("| xack | 0.077 | 0.096 |");
        assertThat(md).contains("| xreadgroup | 0.011 | 0.065 |");
        assertThat(md).contains("| fewer than 0.001 each: cluster|nodes | | |");
        assertThat(Targets.evaluate(results())).anySatisfy(c -> {
            assertThat(c.target()).isEqualTo("drain on a 3-master cluster (6 partitions, C = 4) ≥ 0.70× one node");
            assertThat(c.measured()).isEqualTo("0.70× (0.60×–0.80×)");
            assertThat(c.verdict()).isEqualTo(Verdict.WITHIN_NOISE); // the median meets it, the range straddles it
        });
    }

    private static DelayScenario.Lateness late(double p99, long early) {
        return new DelayScenario.Lateness(1.0, p99, 60.0, 0.2, 50_000, 50_000, early, 5_000, 0.02);
    }

    private static DelayScenario.Retry retry(double rate, double lastSeconds, double p50) {
        return new DelayScenario.Retry(rate, rate * 1.25, lastSeconds, p50, p50 * 2);
    }

    @Test
    void delaySectionShowsLatenessMovesAndRetriesAndTheTargets() {
        Results r = results();
        r.delay = new DelayScenario.Result(5_000, 10_000, 500, 3_000, 2, 4, 100, 20,
                List.of(late(10, 0), late(30, 0), late(70, 0)), List.of(late(5, 0)), List.of(late(8, 0)), 40, 100, 300,
                List.of(late(90, 0)), List.of(late(20, 0)), 200_000, 1_000, 8,
                List.of(new DelayScenario.Move(15_000, 40_000, 80_000), DelayScenario.Move.FAILED), 200_000, 10, 100,
                1_000, 200, List.of(retry(100_000, Double.NaN, Double.NaN)), List.of(retry(80_000, 2.1, 110)),
                List.of(retry(50_000, 3.3, 1_100)));
        String md = new Report(r, Map.of()).render();
        assertThat(md).contains("## 9. Delayed delivery and retries");
        assertThat(md).contains("| **polled, `delayPollInterval` 100 ms (the default)** | 1.00 | **30.0 (10.0–70.0)** |"
                + " 60.0 | 0.200 | 0 of 150,000 | 5.0k |");
        assertThat(md).contains("| **moved into the stream** | **40k** |");
        assertThat(md).contains("| moved ÷ `publishAll`, per round | 0.50× |");
        assertThat(md).contains("| **`fixed(100 ms)`** | 80k | 0.80× | 100k | 0.80× | 2.10 s | 110 | 220 |");
        assertThat(md).contains("| no failures | 100k |  | 125k |  | — | — | — |");
        List<Targets.Check> checks = Targets.evaluate(r);
        assertThat(checks).anySatisfy(c -> {
            assertThat(c.target()).contains("lateness p99");
            assertThat(c.measured()).startsWith("30.0 (10.0–70.0) ms");
            assertThat(c.verdict()).isEqualTo(Verdict.WITHIN_NOISE);
        });
        assertThat(checks).anySatisfy(c -> {
            assertThat(c.target()).contains("before it is due");
            assertThat(c.verdict()).isEqualTo(Verdict.MET);
        });
        r.delay = new DelayScenario.Result(5_000, 10_000, 500, 3_000, 2, 4, 100, 20, List.of(late(10, 0)),
                List.of(late(5, 1)), List.of(), 40, 100, 300, List.of(), List.of(), 200_000, 1_000, 8, List.of(),
                200_000, 10, 100, 1_000, 200, List.of(), List.of(), List.of());
        assertThat(Targets.evaluate(r)).anySatisfy(c -> {
            assertThat(c.target()).contains("before it is due");
            assertThat(c.measured()).isEqualTo("1 early");
            assertThat(c.verdict()).isEqualTo(Verdict.MISSED);
        });
    }

    private static HungMasterScenario.Round hung(double during, int twiceDuring, int twiceAfter, long unhandled) {
        return new HungMasterScenario.Round(3.5, 2_000, during, 2_000, during * 0.9, 250, 2_000, 2_000, 2_000, 0.5, 6,
                0, twiceDuring, twiceAfter, 4, 0, 120_000, unhandled, 0, 10, 0, 3);
    }

    @Test
    void hungMasterSectionGivesEachRoundAndChecksPaceAndRunsTwiceInEveryRound() {
        Results r = results();
        r.hungMaster = new HungMasterScenario.Result(3, 6, 500, 8, 15_000, 5_000, 10_000,
                List.of(hung(2_000, 0, 0, 0), hung(1_900, 0, 0, 0)),
                List.of(hung(2_000, 0, 0, 0), hung(1_200, 2, 1, 3)));
        String md = new Report(r, Map.of()).render();
        assertThat(md).contains("## 10. One hung master");
        assertThat(md).contains("| **during ÷ before** | **0.98× (0.95×–1.00×)** | **0.80× (0.60×–1.00×)** |");
        assertThat(md).contains("| **healthy entries run twice, per round** (the second run during the stop + after it)"
                + " | 0 + 0, 0 + 0 | 0 + 0, 2 + 1 |");
        assertThat(md).contains("| every published entry handled, nothing left pending, per round | yes, yes |"
                + " yes, 3 unhandled, 0 pending |");
        List<Targets.Check> checks = Targets.evaluate(r);
        assertThat(checks).anySatisfy(c -> {
            assertThat(c.target()).startsWith("one master hung, unordered: the other masters' partitions keep ≥ 0.90×");
            assertThat(c.verdict()).isEqualTo(Verdict.MET);
        });
        assertThat(checks).anySatisfy(c -> {
            assertThat(c.target()).startsWith("one master hung, ordered: the other masters' partitions keep ≥ 0.90×");
            assertThat(c.verdict()).isEqualTo(Verdict.MISSED); // one round at 0.60×
        });
        assertThat(checks).anySatisfy(c -> {
            assertThat(c.target()).startsWith("one master hung, ordered: 0 entries");
            assertThat(c.measured()).isEqualTo("0, 3 run twice; every entry handled in 1 of 2");
            assertThat(c.verdict()).isEqualTo(Verdict.MISSED);
        });
    }

    @Test
    void resultsWithoutTheDelayScenarioRenderWithoutItsSection() {
        String md = new Report(results(), Map.of()).render();
        assertThat(md).doesNotContain("## 9.");
        assertThat(Targets.evaluate(results())).noneSatisfy(c -> assertThat(c.target()).contains("delayed"));
    }

    @Test
    void runsAreComparedWithTheBestSetBasedReferenceOfEachRound() {
        Results r = results();
        Map<Integer, List<Double>> reference = new LinkedHashMap<>();
        reference.put(1, List.of(10_000.0, 12_000.0));
        reference.put(2, List.of(20_000.0, 11_000.0));
        List<Double> none = List.of(Double.NaN, Double.NaN);
        r.runs = new RunsScenario.Result(20_000, 64, 64, 20_000, 5_000, 2_000, 5_000, List.of(8_000.0, 9_000.0),
                reference, List.of(1_000.0, 1_000.0), List.of(1_500.0, 1_500.0), List.of(4.0, 6.0),
                List.of(15.0, 18.0), none, none, none, none);
        assertThat(r.runs.bestReference()).containsExactly(20_000.0, 12_000.0);
        String md = new Report(r, Map.of()).render();
        assertThat(md).contains("| **set-based reference, the best of each round** | 16k (12k–20k) |"
                + " 0.58× (0.40×–0.75×) |");
        assertThat(md).contains("runbus ÷ the best set-based reference, round by round: 0.40×, 0.75×"
                + " (target ≥ 0.60×).");
        assertThat(Targets.evaluate(r)).anySatisfy(c -> {
            assertThat(c.target()).startsWith("runs ≥ 0.60× the set-based PostgreSQL reference");
            assertThat(c.verdict()).isEqualTo(Verdict.WITHIN_NOISE);
        });
        assertThat(Targets.evaluate(r)).anySatisfy(c -> {
            assertThat(c.target()).startsWith("runs submit→done→ack p50 ≤ 5 ms");
            assertThat(c.verdict()).isEqualTo(Verdict.WITHIN_NOISE);
        });
    }

    @Test
    void theGeneratedAnalysisGivesTheTailAtEveryRateRoundByRound() {
        Results r = results();
        Map<Integer, Map<String, List<LatencyScenario.Sample>>> samples = new LinkedHashMap<>();
        for (int rate : List.of(5_000, 20_000)) {
            Map<String, List<LatencyScenario.Sample>> byName = new LinkedHashMap<>();
            byName.put(RunbusContender.NAME, List.of(sample(0.3, 1.0), sample(0.3, 2.0)));
            byName.put(LettuceLoopContender.NAME, List.of(sample(0.3, 2.0), sample(0.3, 1.0)));
            samples.put(rate, byName);
        }
        r.latency = new LatencyScenario.Result(List.of(5_000, 20_000), 4, 5_000,
                List.of(RunbusContender.NAME, LettuceLoopContender.NAME), samples, true);
        String md = new Report(r, Map.of()).render();
        assertThat(md).contains("## This run, in numbers");
        assertThat(md).contains("- **Tail at 20,000 msg/s**: runbus p50 0.300 ms, p99 1.50 (1.00–2.00) ms");
        assertThat(md).contains("runbus ÷ loop at p99, round by round: 0.50×, 2.00× — at most 1.00× in 1 of 2 rounds");
        assertThat(Targets.evaluate(r)).anySatisfy(c -> {
            assertThat(c.target()).startsWith("latency at 20,000 msg/s: runbus p99 ÷ Lettuce loop p99");
            assertThat(c.verdict()).isEqualTo(Verdict.MISSED); // one round of two above 1.00×
        });
        assertThat(md).contains("> Written by hand for the run of");
    }

    private static LatencyScenario.Sample sample(double p50, double p99) {
        return new LatencyScenario.Sample(p50, p99, p99 * 2, 5_000, false);
    }

    @Test
    void onRedis8TheRecoveryOfBothPathsIsShownWithTheirRatioAndItsTarget() {
        Results r = results();
        r.recovery = new RecoveryScenario.Result(500, 2_000, 500, 666, List.of(2.1, 2.4, 2.2),
                List.of(10.0, 300.0, 650.0), List.of(2.0, 2.6, 2.2));
        String md = new Report(r, Map.of()).render();
        assertThat(md).contains("| the same on the Redis 8.0 path (`runbus.redis.commandsUpTo=8.0`, victim and survivor)"
                + " | 2.20 s (2.00 s–2.60 s) |");
        // per round 2.1/2.0, 2.4/2.6, 2.2/2.2
        assertThat(md).contains("| the server's own path ÷ the 8.0 path, per round | 1.00× (0.92×–1.05×) |");
        assertThat(md).contains("10 ms → 2.10 s (8.0 path 2.00 s)");
        assertThat(Targets.evaluate(r)).anySatisfy(c -> {
            assertThat(c.target()).isEqualTo("recovery on Redis 8's path ≤ 1.00× the 8.0 path's time");
            assertThat(c.verdict()).isEqualTo(Verdict.WITHIN_NOISE);
        });
    }

    @Test
    void optionsParseAsOneStringFromExecArgs() {
        BenchOptions o = BenchOptions.parse("--quick --scenarios drain,runs,cluster --repeats 2");
        assertThat(o.quick()).isTrue();
        assertThat(o.scenarios()).containsExactly("drain", "runs", "cluster");
        assertThat(BenchOptions.parse().scenarios()).contains("cluster", "delay");
        assertThat(o.repeats()).isEqualTo(2);
        assertThat(o.out().toString()).endsWith("benchmarks-quick.md");
        assertThat(BenchOptions.parse().repeats()).isEqualTo(5);
        assertThat(BenchOptions.parse("--seed 42").seed()).isEqualTo(42);
    }
}
