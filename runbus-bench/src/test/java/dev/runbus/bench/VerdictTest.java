package dev.runbus.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class VerdictTest {

    @Test
    void aRangeOnBothSidesOfTheTargetIsWithinNoiseNotMet() {
        assertThat(Verdict.atLeast(Stats.of(List.of(0.9, 1.05, 1.1)), 1.0)).isEqualTo(Verdict.WITHIN_NOISE);
        assertThat(Verdict.atLeast(Stats.of(List.of(1.0, 1.05, 1.1)), 1.0)).isEqualTo(Verdict.MET);
        assertThat(Verdict.atLeast(Stats.of(List.of(0.8, 0.9, 0.95)), 1.0)).isEqualTo(Verdict.MISSED);
        assertThat(Verdict.atMost(Stats.of(List.of(4.0, 6.0)), 5.0)).isEqualTo(Verdict.WITHIN_NOISE);
        assertThat(Verdict.atMost(Stats.of(List.of()), 5.0)).isEqualTo(Verdict.NOT_MEASURED);
    }

    @Test
    void aTargetOfEveryRoundIsMissedByOneRoundOrOneFailure() {
        assertThat(Verdict.everyRound(Stats.of(List.of(0.99, 1.2)), 2, true, 1.0)).isEqualTo(Verdict.MISSED);
        assertThat(Verdict.everyRound(Stats.of(List.of(1.01, 1.2)), 3, true, 1.0)).isEqualTo(Verdict.MISSED);
        assertThat(Verdict.everyRound(Stats.of(List.of(1.01, 1.2)), 2, true, 1.0)).isEqualTo(Verdict.MET);
    }
}
