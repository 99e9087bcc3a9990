package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The test parser of the exposition format refuses what Prometheus refuses, and reads what it reads. */
class PrometheusTextTest {

    @Test
    void readsFamiliesOfEveryKindWithEscapedLabels() {
        var families = PrometheusText.parse("""
                # HELP a_total Things, with a \\\\ and a \\n
                # TYPE a_total counter
                a_total{topic="x\\"y",group="g\\\\h\\nz"} 3.0
                a_total{topic="x",group="g"} 1
                # TYPE d_seconds summary
                d_seconds_count{outcome="success"} 2.0
                d_seconds_sum{outcome="success"} 0.5
                # TYPE up gauge
                up NaN
                """);
        assertThat(families).containsOnlyKeys("a_total", "d_seconds", "up");
        assertThat(families.get("a_total").samples().get(0).labels()).containsEntry("topic", "x\"y")
                .containsEntry("group", "g\\h\nz");
        assertThat(families.get("d_seconds").samples()).hasSize(2);
    }

    @Test
    void refusesWhatPrometheusRefuses() {
        for (String bad : new String[] {
                "# TYPE a counter\n# TYPE a counter\na 1\n",        // a second TYPE
                "a 1\n# TYPE a counter\n",                          // TYPE after the samples
                "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x=\"1\"} 2\n", // a family's samples apart
                "a{x=\"1\"} 1\na{x=\"1\"} 2\n",                     // the same series twice
                "a{x=\"\\t\"} 1\n",                                 // an unknown escape
                "a{x=\"1} 1\n",                                     // no closing quote
                "a{1x=\"1\"} 1\n",                                  // a bad label name
                "a-b 1\n",                                          // a bad metric name
                "a one\n",                                          // not a float
                "# TYPE a kounter\na 1\n",                          // an unknown type
                "a 1",                                              // no final line feed
        }) {
            assertThatThrownBy(() -> PrometheusText.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
