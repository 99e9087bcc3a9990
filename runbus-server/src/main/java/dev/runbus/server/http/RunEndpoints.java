package dev.runbus.server.http;

import dev.runbus.runs.IllegalRunTransitionException;
import dev.runbus.runs.Run;
import dev.runbus.runs.RunNotFoundException;
import dev.runbus.runs.RunPage;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.Runs;
import dev.runbus.runs.SubmitResult;
import dev.runbus.server.Views;
import io.javalin.http.Context;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.BadMessageException;

/** {@code POST /v1/runs}, {@code GET /v1/runs}, {@code GET /v1/runs/{id}}, its events and its cancel. */
final class RunEndpoints {

    private final Runs runs;
    private final int maxBody;
    private final SubmissionRate rate;
    private final EventStreams events;
    private final long requestTimeoutNanos;

    RunEndpoints(Runs runs, int maxBody, java.time.Duration requestTimeout, SubmissionRate rate,
                 EventStreams events) {
        this.runs = runs;
        this.maxBody = maxBody;
        this.requestTimeoutNanos = requestTimeout.toNanos();
        this.rate = rate;
        this.events = events;
    }

    /** Checks everything before anything is written: a refused submission leaves no row and no stream entry. */
    void submit(Context ctx) {
        String type = ctx.contentType();
        if (type == null || !type.toLowerCase(java.util.Locale.ROOT).startsWith("application/json")) {
            throw new ApiError(415, "Content-Type must be application/json", null);
        }
        Caller caller = AccessLayer.caller(ctx);
        long wait = rate.acquire(caller.key());
        if (wait > 0) {
            throw new ApiError(429, "too many submissions: slow down", null,
                    Math.max(1, TimeUnit.NANOSECONDS.toSeconds(wait + 999_999_999)));
        }
        SubmitRequest.Parsed request = SubmitRequest.parse(body(ctx), ctx.header("Idempotency-Key"),
                java.time.Instant.now());
        // The caller's own key space: a duplicate or a conflict can name only a run this token submitted.
        SubmitResult r = runs.submit(request.run(), caller.keyScope(), request.delay());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("run_id", r.runId().toString());
        out.put("status", r.status().sql());
        out.put("created", r.created());
        ctx.status(r.created() ? 201 : 200).json(out);
    }

    /**
     * At most {@code maxBody} bytes of the body, whatever the request claims: a chunked body has no length to
     * check beforehand, so one byte more than the limit is read and means 413. The body must arrive within
     * {@code requestTimeout} of the first read (each blocking read waits at most as long, by Jetty's blocking
     * idle timeout): a client that stops halfway, or trickles, holds the thread no longer. Time the request
     * spent queued before the handler ran does not count against the client.
     */
    private byte[] body(Context ctx) {
        if (ctx.contentLength() > maxBody) {
            throw tooLarge();
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        long deadline = System.nanoTime() + requestTimeoutNanos;
        byte[] buffer = new byte[8192];
        try (InputStream in = ctx.req().getInputStream()) {
            int n;
            while (body.size() <= maxBody && (n = in.read(buffer, 0, Math.min(buffer.length, maxBody + 1 - body.size())))
                    >= 0) {
                body.write(buffer, 0, n);
                if (System.nanoTime() > deadline && body.size() <= maxBody) {
                    throw late();
                }
            }
        } catch (IOException e) {
            // A blocking read that waited out the timeout: Jetty's IOException caused by a TimeoutException.
            throw e.getCause() instanceof TimeoutException ? late() : unreadable();
        } catch (BadMessageException e) { // a malformed chunk, or Jetty's own timeout
            throw e.getCode() == 408 ? late() : unreadable();
        }
        if (body.size() > maxBody) {
            throw tooLarge();
        }
        return body.toByteArray();
    }

    private ApiError tooLarge() {
        return new ApiError(413, "the body is larger than the limit of " + maxBody + " bytes", null);
    }

    private static ApiError late() {
        return new ApiError(408, "the body did not arrive in time", null);
    }

    private static ApiError unreadable() {
        return new ApiError(400, "the body could not be read", null);
    }

    /**
     * A page of runs, newest first, each as {@code GET /v1/runs/{id}} shows it without its replies: no idempotency
     * key, since keys belong to the token that submitted and the listing is open to every read token.
     */
    void list(Context ctx) {
        RunPage page = runs.list(RunListRequest.parse(ctx));
        List<Map<String, Object>> items = new ArrayList<>();
        page.runs().forEach(r -> items.add(Views.run(r)));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("runs", items);
        out.put("next_cursor", page.next().map(RunListRequest::cursor).orElse(null));
        ctx.json(out);
    }

    void get(Context ctx) {
        UUID id = runId(ctx);
        Run run = runs.get(id).orElseThrow(() -> ApiError.notFound("no run " + id));
        Map<String, Object> out = Views.run(run);
        List<Map<String, Object>> replies = new ArrayList<>();
        runs.replies(id).forEach(r -> replies.add(Map.of("seq", r.seq(), "role", r.role(), "content", r.content())));
        out.put("replies", replies);
        ctx.json(out);
    }

    /** A pending run becomes cancelled (again: the same answer); any other status is a conflict. */
    void cancel(Context ctx) {
        UUID id = runId(ctx);
        try {
            runs.cancel(id);
        } catch (RunNotFoundException e) {
            throw ApiError.notFound("no run " + id);
        } catch (IllegalRunTransitionException e) {
            throw new ApiError(409, e.getMessage(), null);
        }
        ctx.json(Map.of("run_id", id.toString(), "status", RunStatus.CANCELLED.sql()));
    }

    void events(Context ctx) throws IOException {
        events.follow(ctx, runId(ctx), AccessLayer.caller(ctx));
    }

    private static UUID runId(Context ctx) {
        return Inputs.runId(ctx.pathParam("id"), "id");
    }
}
