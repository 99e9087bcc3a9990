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
        r.recovery = new RecoveryScenario.Result(500, 2_000, 500, List.of(2.1, 2.4, Double.NaN));
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
        assertThat(checks).anySatisfy(c -> {
            assertThat(c.target()).contains("Lettuce loop");
            assertThat(c.met()).isTrue();
        });
        assertThat(checks).anySatisfy(c -> {
            assertThat(c.target()).contains("Spring");
            assertThat(c.met()).isTrue(); // per round 4.0×, 5.0×, 4.6×
        });
        // a failed recovery round counts as a miss
        assertThat(checks).anySatisfy(c -> {
            assertThat(c.target()).startsWith("recovery");
            assertThat(c.met()).isFalse();
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
            assertThat(c.met()).isTrue();
        });
    }

    @Test
    void optionsParseAsOneStringFromExecArgs() {
        BenchOptions o = BenchOptions.parse("--quick --scenarios drain,runs,cluster --repeats 2");
        assertThat(o.quick()).isTrue();
        assertThat(o.scenarios()).containsExactly("drain", "runs", "cluster");
        assertThat(BenchOptions.parse().scenarios()).contains("cluster");
        assertThat(o.repeats()).isEqualTo(2);
        assertThat(o.out().toString()).endsWith("benchmarks-quick.md");
    }
}
