package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.testkit.Wait;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The scheduled page offers only what works: a delayed run has a Cancel (the run's cancel), but a run's retry has
 * none, since its run is running and the run's cancel answers 409 to anything but a pending run; the row says why
 * and links to the run. Without tokens every caller on loopback holds {@code admin}, so a missing button is the
 * page's choice, not the caller's scope.
 */
class ScheduledPageTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Pattern ROW = Pattern.compile("<tr class=\"scheduled-entry\".*?</tr>", Pattern.DOTALL);

    static TestServe serve;

    @BeforeAll
    static void start() {
        GatedHandler.OPEN.set(false);
        // A failed attempt's retry waits an hour in the delay set: the page shows it all along.
        serve = TestServe.start(Map.of(Setting.HANDLER, GatedHandler.class.getName(), Setting.RETRY, "fixed:1h"));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void aRunsRetryAndADelayedRunBothHaveACancel_whichCancelsTheRetriedRunAtOnce() throws Exception {
        String retrying = submit("{\"session_id\":\"s\",\"user_id\":\"u\",\"input\":\"gated once\"}");
        Wait.until("the run's first attempt failed and its retry waits in the delay set", WAIT, () -> {
            for (JsonNode e : json("/v1/scheduled?topic=runs").get("entries")) {
                if (e.get("attempts").asInt() == 1) {
                    return true;
                }
            }
            return false;
        });
        String delayed = submit("{\"session_id\":\"s\",\"user_id\":\"v\",\"input\":\"later\",\"delay\":\"PT1H\"}");

        String page = serve.send(serve.request("/scheduled?topic=runs")).body();
        String retryRow = row(page, retrying);
        assertThat(retryRow).contains("<td>1</td>") // its attempts
                .contains("<button type=\"button\" class=\"cancel\" data-method=\"POST\""
                        + " data-url=\"/v1/runs/" + retrying + "/cancel\"").contains("class=\"note retry-note\"")
                .contains("between attempts").contains("href=\"/runs/" + retrying + "\"");
        assertThat(row(page, delayed)).contains("<button type=\"button\" class=\"cancel\" data-method=\"POST\""
                + " data-url=\"/v1/runs/" + delayed + "/cancel\"").doesNotContain("retry-note");

        // What the button does: the run is running between attempts, and its cancel ends it at once.
        assertThat(run(retrying).get("status").asText()).isEqualTo("running");
        HttpResponse<String> cancel = serve.send(serve.request("/v1/runs/" + retrying + "/cancel")
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{}")));
        assertThat(cancel.statusCode()).as(cancel.body()).isEqualTo(200);
        assertThat(cancel.body()).contains("\"status\":\"cancelled\"");
        assertThat(run(retrying).get("status").asText()).isEqualTo("cancelled");
    }

    /** The page's row of a run's entry. */
    private static String row(String page, String runId) {
        Matcher m = ROW.matcher(page);
        while (m.find()) {
            if (m.group().contains("/runs/" + runId + "\"")) {
                return m.group();
            }
        }
        throw new AssertionError("no row for run " + runId + " on the page:\n" + page);
    }

    private static JsonNode run(String id) {
        return json("/v1/runs/" + id);
    }

    private static JsonNode json(String path) {
        try {
            return TestServe.json(serve.get(path, null));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String submit(String body) throws Exception {
        HttpResponse<String> r = serve.send(serve.request("/v1/runs").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        return TestServe.json(r).get("run_id").asText();
    }
}
