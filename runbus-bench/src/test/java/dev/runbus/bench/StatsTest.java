package dev.runbus.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class StatsTest {

    @Test
    void medianOfAnOddNumberIsTheMiddleValue() {
        Stats.Summary s = Stats.of(List.of(3.0, 1.0, 2.0));
        assertThat(s.median()).isEqualTo(2.0);
        assertThat(s.min()).isEqualTo(1.0);
        assertThat(s.max()).isEqualTo(3.0);
        assertThat(s.n()).isEqualTo(3);
    }

    @Test
    void medianOfAnEvenNumberIsTheMeanOfTheTwoMiddleValues() {
        assertThat(Stats.of(List.of(4.0, 1.0, 3.0, 2.0)).median()).isEqualTo(2.5);
    }

    @Test
    void failedMeasurementsAreLeftOut() {
        Stats.Summary s = Stats.of(List.of(Double.NaN, 5.0, 7.0, Double.NaN, 6.0));
        assertThat(s.n()).isEqualTo(3);
        assertThat(s.median()).isEqualTo(6.0);
        assertThat(Stats.of(List.of(Double.NaN)).isEmpty()).isTrue();
        assertThat(Stats.of(List.of()).isEmpty()).isTrue();
    }

    @Test
    void pairedRatiosCompareTheSameRound() {
        Stats.Summary r = Stats.pairedRatio(List.of(10.0, 20.0, 30.0), List.of(5.0, 20.0, Double.NaN));
        assertThat(r.n()).isEqualTo(2);
        assertThat(r.min()).isEqualTo(1.0);
        assertThat(r.max()).isEqualTo(2.0);
        assertThat(r.median()).isEqualTo(1.5);
    }
}
