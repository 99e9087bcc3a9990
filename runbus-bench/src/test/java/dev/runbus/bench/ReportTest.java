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
        return r;
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
    void optionsParseAsOneStringFromExecArgs() {
        BenchOptions o = BenchOptions.parse("--quick --scenarios drain,runs --repeats 2");
        assertThat(o.quick()).isTrue();
        assertThat(o.scenarios()).containsExactly("drain", "runs");
        assertThat(o.repeats()).isEqualTo(2);
        assertThat(o.out().toString()).endsWith("benchmarks-quick.md");
    }
}
