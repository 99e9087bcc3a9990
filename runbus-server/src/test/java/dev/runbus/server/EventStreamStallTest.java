package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A client that follows a run and stops reading must not hold up other followers: the event streams share one
 * poller, which writes without blocking. With blocking writes the poller would wait on the stalled socket for
 * the request timeout (30 s here) before anyone else heard of their runs.
 */
class EventStreamStallTest {

    @Test
    void aFollowerThatReadsNothingDelaysNoOther() throws Exception {
        HoldingHandler.reset();
        try (TestServe serve = TestServe.start(Map.of(Setting.HANDLER, HoldingHandler.class.getName(),
                Setting.REQUEST_TIMEOUT, "30s"))) {
            String big = TestServe.json(serve.submit("hold big", null)).get("run_id").asText();
            try (Socket stalled = new Socket()) {
                stalled.setReceiveBufferSize(4096);
                stalled.connect(new InetSocketAddress("127.0.0.1", serve.server.port()));
                stalled.setSoTimeout(30_000);
                OutputStream out = stalled.getOutputStream();
                out.write(("GET /v1/runs/" + big + "/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                HoldingHandler.release(); // the big run finishes: its 16 MiB reply goes to the stalled client
                // Read until the reply has begun, so the poller is writing it; then read nothing more.
                InputStream in = stalled.getInputStream();
                StringBuilder seen = new StringBuilder();
                while (seen.indexOf("event: reply") < 0) {
                    int b = in.read();
                    assertThat(b).as("the stream of the big run ended early: " + seen).isNotNegative();
                    seen.append((char) b);
                }

                // Another client's run, submitted and followed while the big reply waits on the full socket.
                String quick = TestServe.json(serve.submit("quick", null)).get("run_id").asText();
                long started = System.nanoTime();
                HttpResponse<InputStream> follower = serve.http.send(serve.request("/v1/runs/" + quick + "/events")
                        .build(), HttpResponse.BodyHandlers.ofInputStream());
                assertThat(follower.statusCode()).isEqualTo(200);
                CompletableFuture<String> events = CompletableFuture.supplyAsync(() -> {
                    try {
                        return new String(follower.body().readAllBytes(), StandardCharsets.UTF_8);
                    } catch (java.io.IOException e) {
                        throw new IllegalStateException(e);
                    }
                });
                String got = events.get(60, TimeUnit.SECONDS);
                long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
                assertThat(got).contains("held:quick").contains("event: end");
                assertThat(seconds).as("the other follower heard of its run within seconds, not after the stalled"
                        + " client's 30 s write timeout").isLessThan(15);
            }
        }
    }
}
