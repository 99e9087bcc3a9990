package dev.runbus.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.NewRun;
import dev.runbus.server.ServerSentEvents;
import dev.runbus.server.TestServe;
import io.javalin.Javalin;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A stream with nothing to say sends a keep-alive comment once it has been silent for the keep-alive interval, and
 * the comment reaches the client at once (flushed, as events are), so that a proxy sees traffic. The server's
 * interval is 15 s; these streams, over the runs layer of a real serve (PostgreSQL, Redis), are given 1 s.
 */
class EventStreamKeepAliveTest {

    private static final Duration DEADLINE = Duration.ofSeconds(15);

    static TestServe serve;
    static EventStreams streams;
    static Javalin app;

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of());
        streams = new EventStreams(serve.server.runs(), 4, Duration.ofSeconds(1));
        app = Javalin.create(config -> config.showJavalinBanner = false)
                .get("/events/{id}", ctx -> streams.follow(ctx, UUID.fromString(ctx.pathParam("id")),
                        Caller.anonymous("127.0.0.1"), () -> true))
                .start("127.0.0.1", 0);
    }

    @AfterAll
    static void stop() {
        try {
            streams.close();
            app.stop();
        } finally {
            serve.close();
        }
    }

    @Test
    void anIdleStreamSendsKeepAliveComments() throws Exception {
        UUID id = serve.server.runs().submit(NewRun.of("s", "u", "later"), Duration.ofHours(1)).runId();
        HttpResponse<InputStream> stream = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + app.port() + "/events/" + id)).timeout(Duration.ofSeconds(20))
                .build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(stream.statusCode()).isEqualTo(200);
        try (InputStream in = stream.body()) {
            ServerSentEvents events = new ServerSentEvents(in);
            assertThat(events.next(DEADLINE)).startsWith("event: status\n").contains("\"status\":\"pending\"");
            // The run is due in an hour: nothing but keep-alives follow, each after a second's silence.
            assertThat(events.next(DEADLINE)).isEqualTo(": keep-alive");
            assertThat(events.next(DEADLINE)).isEqualTo(": keep-alive");
        }
    }
}
