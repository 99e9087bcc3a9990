package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/runs/{id}/events} delivers each event when it happens, not when the stream ends: the status event
 * of a run that is due in an hour arrives while the run waits, and a progress event when progress is written. Jetty keeps a small write in its response buffer
 * until the buffer fills or is flushed; unflushed, a follower heard nothing until its run ended.
 */
class EventStreamLiveTest {

    /** Generous for a busy machine, and far short of the run's delay: the run is pending all along. */
    private static final Duration DEADLINE = Duration.ofSeconds(30);

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
    void theStatusOfAPendingRunArrivesWhileTheRunWaits() throws Exception {
        String body = "{\"session_id\":\"s\",\"user_id\":\"u\",\"input\":\"later\",\"delay\":\"PT1H\"}";
        HttpResponse<String> created = serve.send(serve.request("/v1/runs")
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)));
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        String id = TestServe.json(created).get("run_id").asText();

        HttpResponse<InputStream> stream = serve.http.send(serve.request("/v1/runs/" + id + "/events").build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(stream.statusCode()).isEqualTo(200);
        try (InputStream in = stream.body()) {
            String first = new ServerSentEvents(in).next(DEADLINE);
            assertThat(first).startsWith("event: status\n").contains("\"status\":\"pending\"");
            assertThat(TestServe.json(serve.get("/v1/runs/" + id, null)).get("status").asText())
                    .as("the run had not started when its first event was read").isEqualTo("pending");

            // Progress as a worker writes it (RunContext.progress): the next event says so.
            try (java.sql.Connection c = java.sql.DriverManager.getConnection(
                    dev.runbus.testkit.TestServers.databaseUrl())) {
                c.createStatement().executeUpdate("UPDATE " + serve.schema + ".runs SET progress_percent = 40,"
                        + " progress_details = '2 of 5 files', progress_at = now() WHERE id = '" + id + "'");
            }
            String next = new ServerSentEvents(in).next(DEADLINE);
            assertThat(next).startsWith("event: progress\n").contains("\"percent\":40")
                    .contains("\"details\":\"2 of 5 files\"");
        }
    }
}
