package dev.runbus.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class FmtTest {

    @Test
    void ratesAreShortened() {
        assertThat(Fmt.rate(131_234)).isEqualTo("131k");
        assertThat(Fmt.rate(9_840)).isEqualTo("9.8k");
        assertThat(Fmt.rate(850)).isEqualTo("850");
        assertThat(Fmt.rate(Double.NaN)).isEqualTo("—");
    }

    @Test
    void millisecondsKeepThreeSignificantDigits() {
        assertThat(Fmt.ms(0.4123)).isEqualTo("0.412");
        assertThat(Fmt.ms(3.051)).isEqualTo("3.05");
        assertThat(Fmt.ms(42.26)).isEqualTo("42.3");
        assertThat(Fmt.ms(118.4)).isEqualTo("118");
    }

    @Test
    void negativeZeroIsWrittenAsZero() {
        assertThat(Fmt.mb(-0.0001)).isEqualTo("0.0 MB");
        assertThat(Fmt.mb(12.34)).isEqualTo("12.3 MB");
    }

    @Test
    void summaryShowsMedianAndRange() {
        assertThat(Fmt.summary(Stats.of(List.of(1.0, 2.0, 4.0)), Fmt::ratio)).isEqualTo("2.00× (1.00×–4.00×)");
        assertThat(Fmt.summary(Stats.of(List.of(2.0)), Fmt::ratio)).isEqualTo("2.00×");
        assertThat(Fmt.summary(Stats.of(List.of()), Fmt::ratio)).isEqualTo("—");
    }

    @Test
    void payloadCarriesItsEnqueueTimeAndMarker() {
        byte[] p = Payloads.make(123_456_789_012L, true);
        assertThat(p).hasSize(Payloads.SIZE);
        assertThat(Payloads.enqueuedAt(p)).isEqualTo(123_456_789_012L);
        assertThat(Payloads.enqueuedAt(Payloads.text(p))).isEqualTo(123_456_789_012L);
        assertThat(Payloads.isPoison(p)).isTrue();
        assertThat(Payloads.isPoison(Payloads.make(5, false))).isFalse();
    }
}
