package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.FlowRate;
import dev.runbus.Message;
import dev.runbus.testkit.RedisTarget;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A topic's page shows its flow keys: waiting, slots held, and their own limits beside the group's. */
class DashboardFlowTest {

    static TestServe serve;

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of());
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void aTopicsPageListsItsFlowKeys_withWhatWaitsAndTheirOwnLimits() throws Exception {
        try (Bus bus = Bus.connect(BusConfig.builder(RedisTarget.local().uri()).keyPrefix(serve.prefix).build())) {
            bus.publisher().publish("jobs", Message.of("plain", new byte[0])); // the topic's stream exists
            for (int n = 0; n < 3; n++) {
                bus.publisher().publish("jobs", Message.builder("job", new byte[0]).flowKey("tenant-<b>").build());
            }
            bus.publisher().publish("jobs", Message.builder("job", new byte[0]).flowKey("tenant-7").build());
            bus.setFlowCap("jobs", "tenant-7", 0);
            bus.setFlowRate("jobs", "tenant-7", FlowRate.perSecond(5).withBurst(2));
            bus.setFlowWeight("jobs", "tenant-7", 2);

            HttpResponse<String> page = serve.send(serve.request("/topics/jobs"));
            assertThat(page.statusCode()).isEqualTo(200);
            String body = page.body();
            assertThat(body).contains("<h2>Flow control</h2>").contains("4 messages waiting for a slot")
                    .contains("id=\"flow-keys\"");
            assertThat(body).as("a key is text, escaped").contains("tenant-&lt;b&gt;").doesNotContain("tenant-<b>");
            assertThat(row(body, "tenant-&lt;b&gt;")).contains("<td>3</td>").contains("the group&#39;s");
            assertThat(row(body, "tenant-7")).contains("<td>1</td>").contains("0 (own)").contains("5.00/s, burst 2 (own)")
                    .contains("2.0 (own)");
        }
    }

    /** The table row of {@code key}. */
    private static String row(String body, String key) {
        int at = body.indexOf("<td>" + key + "</td>");
        assertThat(at).as("a row for " + key).isPositive();
        return body.substring(at, body.indexOf("</tr>", at));
    }
}
