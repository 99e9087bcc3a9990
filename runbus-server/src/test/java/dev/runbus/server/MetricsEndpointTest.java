package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Message;
import dev.runbus.testkit.Wait;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code /metrics} of a real serve (ordered runs, so that leases and owned partitions show): the whole text parses
 * under the exposition format's rules, and every series docs/metrics.md documents is there.
 */
class MetricsEndpointTest {

    static final Duration WAIT = Duration.ofSeconds(30);
    static TestServe serve;

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of(Setting.ORDERED, "true"));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void theWholeTextParsesAndHoldsEveryDocumentedSeries() throws Exception {
        assertThat(serve.submit("ping", null).statusCode()).isEqualTo(201);
        // A delayed publish (the runs layer makes none) on a topic nobody reads, for the scheduled counter.
        serve.server.infrastructure().bus().publisher().publish("metrics-probe",
                Message.of("probe", "x".getBytes(StandardCharsets.UTF_8)), Duration.ofHours(1));
        Wait.until("the run done", WAIT, MetricsEndpointTest::runDone);
        // A schedule, for its fires' counters (it fires once an hour: not in this test).
        assertThat(serve.send(serve.request("/v1/schedules/hourly").header("Content-Type", "application/json")
                .PUT(java.net.http.HttpRequest.BodyPublishers.ofString("{\"every\": \"PT1H\", \"run\": "
                        + "{\"session_id\": \"s\", \"user_id\": \"u\", \"input\": \"x\"}}"))).statusCode())
                .isEqualTo(201);

        String text = Wait.until("the run's completion and the gauges in /metrics", WAIT, () -> scrape().body(),
                t -> t.contains("runbus_run_duration_seconds_count{status=\"done\"} 1\n")
                        && t.contains("runbus_stream_length{topic=\"runs\"}")
                        && t.contains("runbus_partitions_unowned{") && t.contains("runbus_group_consumers_alive{")
                        && t.contains("runbus_group_oldest_pending_age_seconds{")
                        && t.contains("runbus_schedule_fires_total{outcome=\"fired\",schedule=\"hourly\"} 0.0"));
        HttpResponse<String> r = scrape();
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain; version=0.0.4");
        var families = PrometheusText.parse(r.body());

        TreeSet<String> missing = new TreeSet<>(documented());
        missing.removeAll(families.keySet());
        assertThat(missing).as("documented in docs/metrics.md, absent from /metrics").isEmpty();
        assertThat(families).containsKeys("jvm_memory_used_bytes", "jvm_threads_live_threads", "process_uptime_seconds",
                "process_cpu_usage", "system_cpu_count");
        assertThat(text).contains("runbus_runs_submitted_total{created=\"true\"} 1.0")
                .contains("runbus_runs{status=\"done\"}")
                .contains("runbus_partitions_owned{consumer=");
    }

    private static boolean runDone() {
        try {
            return TestServe.json(serve.get("/v1/runs/" + serve.runIds().get(0), null)).get("status").asText()
                    .equals("done");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static HttpResponse<String> scrape() {
        try {
            return serve.get("/metrics", null);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The Prometheus families docs/metrics.md names, up to its list of renamed series. */
    static TreeSet<String> documented() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "metrics.md"));
        int renamed = doc.indexOf("## Renamed");
        Matcher m = Pattern.compile("`(runbus_[a-z0-9_]+)`").matcher(renamed < 0 ? doc : doc.substring(0, renamed));
        TreeSet<String> out = new TreeSet<>();
        while (m.find()) {
            out.add(m.group(1));
        }
        assertThat(out).as("series named in docs/metrics.md").hasSizeGreaterThan(20);
        return out;
    }
}
