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
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** {@code POST /v1/runs}, {@code GET /v1/runs}, {@code GET /v1/runs/{id}}, its events and its cancel. */
final class RunEndpoints {

    private final Runs runs;
    private final RequestBody body;
    private final SubmissionRate rate;
    private final EventStreams events;
    private final BrowserSessions sessions;

    /** @param sessions the dashboard's sessions, whose end ends their event streams; null without tokens */
    RunEndpoints(Runs runs, RequestBody body, SubmissionRate rate, EventStreams events, BrowserSessions sessions) {
        this.runs = runs;
        this.body = body;
        this.rate = rate;
        this.events = events;
        this.sessions = sessions;
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
        SubmitRequest.Parsed request = SubmitRequest.parse(body.read(ctx), ctx.header("Idempotency-Key"),
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

    /**
     * A pending run (or a running one between attempts) becomes cancelled, 200 (again: the same answer); a running
     * one cancelling, 202 (its handler is told; the run ends cancelled when the attempt ends); a done or failed run is
     * a conflict.
     */
    void cancel(Context ctx) {
        UUID id = runId(ctx);
        RunStatus now;
        try {
            now = runs.cancel(id);
        } catch (RunNotFoundException e) {
            throw ApiError.notFound("no run " + id);
        } catch (IllegalRunTransitionException e) {
            throw new ApiError(409, e.getMessage(), null);
        }
        ctx.status(now == RunStatus.CANCELLING ? 202 : 200);
        ctx.json(Map.of("run_id", id.toString(), "status", now.sql()));
    }

    void events(Context ctx) throws IOException {
        events.follow(ctx, runId(ctx), AccessLayer.caller(ctx),
                sessions == null ? () -> true : sessions.stillSignedIn(ctx));
    }

    private static UUID runId(Context ctx) {
        return Inputs.runId(ctx.pathParam("id"), "id");
    }
}
