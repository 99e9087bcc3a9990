package dev.runbus.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The sizing program's flags, how it combines repeated measurements and how it writes sizes. */
class SizingTest {

    @Test
    void flagsHaveDefaults_andAreReadAsExecArgsPassesThem() {
        SizingOptions defaults = SizingOptions.parse();
        assertThat(defaults.entries()).isEqualTo(SizingOptions.DEFAULT_ENTRIES);
        assertThat(defaults.runs()).isEqualTo(SizingOptions.DEFAULT_RUNS);
        SizingOptions set = SizingOptions.parse("--redis redis://127.0.0.1:6400 --entries 2_000  --runs 500",
                "--database", "jdbc:postgresql://127.0.0.1:5433/x");
        assertThat(set).isEqualTo(new SizingOptions("redis://127.0.0.1:6400", "jdbc:postgresql://127.0.0.1:5433/x",
                2000, 500));
    }

    @Test
    void badFlagsAreNamed() {
        assertThatThrownBy(() -> SizingOptions.parse("--entries", "many")).hasMessage(
                "--entries must be a whole number, got 'many'");
        assertThatThrownBy(() -> SizingOptions.parse("--runs", "10")).hasMessage("--runs must be at least 100, got 10");
        assertThatThrownBy(() -> SizingOptions.parse("--redis")).hasMessage("--redis needs a value");
        assertThatThrownBy(() -> SizingOptions.parse("--quick")).hasMessage("unknown flag: --quick");
    }

    @Test
    void repeatedMeasurementsGiveTheirMedians_andTheRangeOfUsedMemory() {
        List<RedisSizing.Row> rounds = List.of(new RedisSizing.Row("x", 10, 190, 184),
                new RedisSizing.Row("x", 10, 193, 3246), new RedisSizing.Row("x", 10, 192, 180));
        assertThat(RedisSizing.Row.median(rounds)).isEqualTo(new RedisSizing.Row("x", 10, 192, 184, 180, 3246));
        assertThat(RedisSizing.medians(List.of(List.of(rounds.get(0)), List.of(rounds.get(1)),
                List.of(rounds.get(2))))).containsExactly(new RedisSizing.Row("x", 10, 192, 184, 180, 3246));
    }

    @Test
    void sizesAreWrittenAsAServersMemoryIsRead() {
        assertThat(RedisSizing.size(100)).isEqualTo("100 B");
        assertThat(RedisSizing.size(10 * 1024)).isEqualTo("10 KiB");
        assertThat(Sizing.human(65_500_000)).isEqualTo("66 MB");
        assertThat(Sizing.human(4_331_000_000.0)).isEqualTo("4.3 GB");
        assertThat(RunsSizing.input(7)).hasSize(RunsSizing.INPUT_BYTES).startsWith("input 7 ");
    }
}
