package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code serve} with the flow flags (docs/cli.md): runs submitted over HTTP with a {@code flow_key} wait outside the
 * stream for their tenant's slot. With {@code --flow-cap 1}, four held runs of one tenant and one of another: one of
 * each runs, three wait in the topic's flow queue, and once the handlers are let go every run ends done, one of a
 * tenant at a time.
 */
class ServeFlowControlTest {

    @Test
    void serveWithAFlowCapRunsOneRunOfATenantAtATime() throws Exception {
        try (TestServe serve = TestServe.start(Map.of(Setting.FLOW_CAP, "1",
                Setting.HANDLER, FlowGateHandler.class.getName()))) {
            List<String> ids = new ArrayList<>();
            for (String input : List.of("a/1", "a/2", "b/1", "a/3", "a/4")) {
                HttpResponse<String> r = serve.send(serve.request("/v1/runs").header("Content-Type",
                        "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"session_id\":\"s1\","
                        + "\"user_id\":\"u1\",\"input\":\"" + input + "\",\"flow_key\":\"tenant-"
                        + input.charAt(0) + "\"}")));
                assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
                ids.add(TestServe.json(r).get("run_id").asText());
            }
            String queue = serve.prefix + ":{runs}:flow:queue";
            Wait.until("one run of each tenant running and tenant-a's three others waiting",
                    Duration.ofSeconds(10), () -> FlowGateHandler.STARTED.get() == 2
                            && RedisTarget.local().redis().zcard(queue) == 3);
            FlowGateHandler.open();
            for (String id : ids) {
                Wait.until("run " + id + " done", Duration.ofSeconds(10), () -> {
                    try {
                        return TestServe.json(serve.get("/v1/runs/" + id, null)).get("status").asText()
                                .equals("done");
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
            }
            assertThat(FlowGateHandler.STARTED.get()).as("handler calls").isEqualTo(5);
            assertThat(FlowGateHandler.MOST_OF_ONE_TENANT.get()).as("runs of one tenant at once").isEqualTo(1);
            assertThat(RedisTarget.local().redis().zcard(queue)).as("runs left waiting").isZero();
        }
    }
}
