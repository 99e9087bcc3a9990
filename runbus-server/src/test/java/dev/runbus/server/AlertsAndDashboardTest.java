package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/prometheus-alerts.yml and docs/grafana-dashboard.json parse, and every expression in them names only series
 * runbus exports: those docs/metrics.md documents, which {@link MetricsEndpointTest} finds in a real /metrics (a
 * summary's {@code _count} and {@code _sum} count as their timer's).
 */
class AlertsAndDashboardTest {

    private static final Path DOCS = Path.of("..", "docs");
    private static final Pattern SERIES = Pattern.compile("\\b(runbus_[a-z0-9_]+)\\b");

    @Test
    void everyAlertParsesAndNamesOnlyExportedSeries() throws Exception {
        JsonNode rules = new ObjectMapper(new YAMLFactory()).readTree(DOCS.resolve("prometheus-alerts.yml").toFile());
        List<String> exprs = new ArrayList<>();
        Set<String> names = new TreeSet<>();
        for (JsonNode group : rules.get("groups")) {
            assertThat(group.get("name").asText()).isNotBlank();
            for (JsonNode rule : group.get("rules")) {
                assertThat(names.add(rule.get("alert").asText())).as("alert names are unique").isTrue();
                assertThat(rule.at("/annotations/summary").asText()).as(rule.get("alert").asText()).isNotBlank();
                exprs.add(rule.get("expr").asText());
            }
        }
        assertThat(names).contains("RunbusDeadLetters", "RunbusOldestPendingTooOld", "RunbusNoLiveConsumer",
                "RunbusSweeperRepublishing", "RunbusPartitionWithoutOwner", "RunbusRunsFailedWithoutDeadLetter");
        assertNamesOnlyExportedSeries(exprs);
    }

    @Test
    void everyDashboardPanelParsesAndNamesOnlyExportedSeries() throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(DOCS.resolve("grafana-dashboard.json").toFile());
        assertThat(dashboard.get("title").asText()).isEqualTo("runbus");
        List<String> exprs = new ArrayList<>();
        for (JsonNode panel : dashboard.get("panels")) {
            assertThat(panel.get("targets")).as(panel.get("title").asText()).isNotEmpty();
            for (JsonNode target : panel.get("targets")) {
                exprs.add(target.get("expr").asText());
            }
        }
        assertThat(exprs).hasSizeGreaterThan(10);
        assertNamesOnlyExportedSeries(exprs);
    }

    private static void assertNamesOnlyExportedSeries(List<String> exprs) throws Exception {
        TreeSet<String> exported = MetricsEndpointTest.documented();
        for (String expr : exprs) {
            Matcher m = SERIES.matcher(expr);
            boolean any = false;
            while (m.find()) {
                any = true;
                String series = m.group(1);
                String base = series.replaceAll("_(count|sum)$", "");
                assertThat(exported.contains(series) || exported.contains(base))
                        .as("%s in '%s' is exported (docs/metrics.md)", series, expr).isTrue();
            }
            assertThat(any).as("'%s' names a runbus series", expr).isTrue();
        }
    }
}
