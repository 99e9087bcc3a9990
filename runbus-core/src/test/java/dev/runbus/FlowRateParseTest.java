package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link FlowRate#parse}: the written form of configuration files and command lines. Our own logic: no Redis. */
class FlowRateParseTest {

    @Test
    void permitsPerPeriodAndAnOptionalBurst() {
        assertThat(FlowRate.parse("5/1s")).isEqualTo(new FlowRate(5, Duration.ofSeconds(1), 1));
        assertThat(FlowRate.parse("100/1m,20")).isEqualTo(new FlowRate(100, Duration.ofMinutes(1), 20));
        assertThat(FlowRate.parse(" 3/500ms ")).isEqualTo(new FlowRate(3, Duration.ofMillis(500), 1));
        assertThat(FlowRate.parse("1/2h")).isEqualTo(new FlowRate(1, Duration.ofHours(2), 1));
    }

    @Test
    void aWrongFormIsRefusedNamingTheForm_andAnImpossibleRateAsTheConstructorDoes() {
        for (String bad : new String[] {"5", "5/s", "5/1d", "/1s", "5/1s,", "5/1s,2,3", "x/1s", "5 / 1s"}) {
            assertThatThrownBy(() -> FlowRate.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("PERMITS/PERIOD[,BURST]").hasMessageContaining("'" + bad + "'");
        }
        assertThatThrownBy(() -> FlowRate.parse("0/1s")).hasMessageContaining("permits must be 1 or more");
        assertThatThrownBy(() -> FlowRate.parse("5/1s,0")).hasMessageContaining("burst must be 1 or more");
        assertThatThrownBy(() -> FlowRate.parse("5/0s")).hasMessageContaining("period must be 1 ms or more");
    }
}
