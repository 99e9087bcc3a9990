package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code /metrics} label values are escaped as the Prometheus text format says (backslash, double quote,
 * newline), so a topic or group name holding them neither breaks the exposition nor forges a sample: parsed back,
 * every line is one well-formed sample whose labels are the names as they are.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES) // above its wait of 40 s as a busy machine stretches it (four times)
class MetricsLabelsTest {

    /** A topic may hold a backslash and a double quote (no whitespace): its labels must carry them intact. */
    static final String TOPIC = "we\\ird\"topic";
    /** Redis takes any group name, and another client may create one: a newline included. */
    static final String GROUP = "g\"1\\\n# TYPE forged counter\nforged_total 1";

    @Test
    void labelValuesHoldingBackslashQuoteAndNewlineParseBackIntact() throws Exception {
        try (TestServe serve = TestServe.start(Map.of(Setting.TOPIC, TOPIC))) {
            serve.submit("one", null); // the topic's stream exists
            RedisTarget.local().redis().xgroupCreate(XReadArgs.StreamOffset.from(serve.prefix + ":{" + TOPIC
                    + "}:stream", "0"), GROUP, XGroupCreateArgs.Builder.mkstream());
            // The gauges are read on a loop of their own (every --meter-refresh): wait for a reading that sees both
            // groups, the new one and the workers' (whose group a busy host may create after the first reading).
            List<Sample> samples = Wait.until("the gauges read after the group was made", Duration.ofSeconds(40),
                    () -> scrape(serve), all -> all.stream().filter(x -> x.name().equals("runbus_group_pending"))
                            .map(x -> x.labels().get("group")).toList().containsAll(List.of(GROUP, "run-workers")));
            assertThat(samples).extracting(Sample::name).doesNotContain("forged_total");
            assertThat(samples).filteredOn(s -> s.name().equals("runbus_stream_length"))
                    .extracting(s -> s.labels().get("topic")).containsExactly(TOPIC);
            assertThat(samples).filteredOn(s -> s.name().equals("runbus_group_pending"))
                    .extracting(s -> s.labels().get("group")).contains(GROUP, "run-workers");
            assertThat(samples).filteredOn(s -> s.name().equals("runbus_group_lag"))
                    .extracting(s -> s.labels().get("topic")).containsOnly(TOPIC);
            assertThat(samples).filteredOn(s -> s.name().equals("runbus_retention_trimmed_total"))
                    .extracting(s -> s.labels().get("topic")).containsExactly(TOPIC);
        }
    }

    private static List<Sample> scrape(TestServe serve) {
        try {
            HttpResponse<String> r = serve.get("/metrics", null);
            assertThat(r.statusCode()).isEqualTo(200);
            List<Sample> samples = new ArrayList<>();
            for (String line : r.body().split("\n")) {
                if (!line.startsWith("#") && !line.isEmpty()) {
                    samples.add(Sample.parse(line));
                }
            }
            return samples;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** One sample line: {@code name{label="value",...} number}, label values unescaped. */
    record Sample(String name, Map<String, String> labels, double value) {

        static Sample parse(String line) {
            int i = 0;
            while (i < line.length() && (Character.isLetterOrDigit(line.charAt(i)) || line.charAt(i) == '_'
                    || line.charAt(i) == ':')) {
                i++;
            }
            String name = line.substring(0, i);
            Map<String, String> labels = new LinkedHashMap<>();
            if (i < line.length() && line.charAt(i) == '{') {
                i++;
                while (line.charAt(i) != '}') {
                    int eq = line.indexOf("=\"", i);
                    String label = line.substring(i, eq);
                    assertThat(label).as(line).matches("[a-zA-Z_][a-zA-Z0-9_]*");
                    StringBuilder value = new StringBuilder();
                    int j = eq + 2;
                    for (; line.charAt(j) != '"'; j++) {
                        char c = line.charAt(j);
                        if (c == '\\') {
                            char next = line.charAt(++j);
                            assertThat(next).as("escape in " + line).isIn('\\', '"', 'n');
                            value.append(next == 'n' ? '\n' : next);
                        } else {
                            value.append(c);
                        }
                    }
                    labels.put(label, value.toString());
                    i = j + 1;
                    if (line.charAt(i) == ',') {
                        i++;
                    }
                }
                i++;
            }
            assertThat(line.charAt(i)).as(line).isEqualTo(' ');
            return new Sample(name, labels, Double.parseDouble(line.substring(i + 1)));
        }
    }
}
