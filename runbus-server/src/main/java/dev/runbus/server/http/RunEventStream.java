package dev.runbus.server.http;

import dev.runbus.runs.Run;
import dev.runbus.runs.Runs;
import dev.runbus.runs.StoredReply;
import dev.runbus.server.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * {@code GET /v1/runs/{id}/events}: server-sent events of one run, read from PostgreSQL (so they are right
 * whichever process executes the run). Events: {@code status} (status, attempts, error, next_attempt_at) on every
 * change,
 * {@code reply} (seq, role, content) for each new reply, and {@code end} when the run is done or failed.
 * A comment line every 15 s keeps proxies from closing the connection; the stream ends after 10 minutes.
 */
final class RunEventStream {

    private static final long POLL_MILLIS = 100;
    private static final long HEARTBEAT_MILLIS = 15_000;
    private static final long MAX_MILLIS = 600_000;

    private final Runs runs;

    RunEventStream(Runs runs) {
        this.runs = runs;
    }

    void stream(UUID id, OutputStream out) throws IOException, InterruptedException {
        String lastStatus = null;
        int lastSeq = 0;
        long start = System.currentTimeMillis();
        long lastWrite = start;
        while (System.currentTimeMillis() - start < MAX_MILLIS) {
            Run run = runs.get(id).orElseThrow(() -> ApiError.notFound("no run " + id));
            String status = run.status().sql() + "/" + run.attempts() + "/" + run.error().orElse("") + "/"
                    + run.nextAttemptAt().map(Object::toString).orElse("");
            if (!status.equals(lastStatus)) {
                Map<String, Object> data = new LinkedHashMap<>();
                data.put("run_id", id.toString());
                data.put("status", run.status().sql());
                data.put("attempts", run.attempts());
                data.put("error", run.error().orElse(null));
                data.put("next_attempt_at", run.nextAttemptAt().map(Object::toString).orElse(null));
                send(out, "status", data);
                lastStatus = status;
                lastWrite = System.currentTimeMillis();
            }
            List<StoredReply> replies = runs.replies(id);
            for (StoredReply r : replies) {
                if (r.seq() > lastSeq) {
                    send(out, "reply", Map.of("seq", r.seq(), "role", r.role(), "content", r.content()));
                    lastSeq = r.seq();
                    lastWrite = System.currentTimeMillis();
                }
            }
            if (run.status().isFinished()) {
                send(out, "end", Map.of("run_id", id.toString(), "status", run.status().sql()));
                return;
            }
            if (System.currentTimeMillis() - lastWrite > HEARTBEAT_MILLIS) {
                out.write(": keep-alive\n\n".getBytes(StandardCharsets.UTF_8));
                out.flush();
                lastWrite = System.currentTimeMillis();
            }
            Thread.sleep(POLL_MILLIS);
        }
    }

    private static void send(OutputStream out, String event, Object data) throws IOException {
        out.write(("event: " + event + "\ndata: " + Json.write(data) + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }
}
