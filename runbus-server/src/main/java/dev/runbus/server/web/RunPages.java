package dev.runbus.server.web;

import dev.runbus.runs.RecordedEffect;
import dev.runbus.runs.Run;
import dev.runbus.runs.RunPage;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.Runs;
import dev.runbus.runs.StoredReply;
import dev.runbus.server.http.ApiError;
import dev.runbus.server.http.Inputs;
import dev.runbus.server.http.RunListRequest;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * {@code /runs}: runs newest first, filtered by status, user, session and creation time, a page at a time (the
 * same query, checks and cursor as {@code GET /v1/runs}); {@code /runs/{id}}: one run with its attempts, error,
 * next attempt, replies and effects, updated live from {@code GET /v1/runs/{id}/events} while it is open, and,
 * for a caller with {@code admin}, cancel while it is pending or running (a running run's handler is told, then
 * interrupted after the workers' grace).
 */
final class RunPages {

    private static final String[] FILTERS = {"status", "user", "session", "created_after", "created_before"};

    private final Runs runs;
    private final Layout layout;

    RunPages(Runs runs, Layout layout) {
        this.runs = runs;
        this.layout = layout;
    }

    void list(Context ctx) {
        // An empty field of the filter form means "any", where the API would refuse an empty value.
        RunPage page = runs.list(RunListRequest.parse(name -> {
            String v = ctx.queryParam(name);
            return v == null || v.isBlank() ? null : v.trim();
        }));
        Map<String, Object> m = layout.model(ctx, "runs", "Runs", layout.topics());
        List<Map<String, Object>> statuses = new ArrayList<>();
        String status = ctx.queryParam("status");
        for (RunStatus s : RunStatus.values()) {
            statuses.add(Map.of("name", s.sql(), "selected", s.sql().equals(status)));
        }
        m.put("statuses", statuses);
        Map<String, Object> filter = new LinkedHashMap<>();
        StringBuilder kept = new StringBuilder();
        for (String f : FILTERS) {
            String v = ctx.queryParam(f);
            filter.put(f, v == null ? "" : v);
            if (v != null && !v.isBlank()) {
                kept.append(f).append('=').append(Links.encode(v.trim())).append('&');
            }
        }
        m.put("filter", filter);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Run r : page.runs()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", r.id().toString());
            row.put("status", r.status().sql());
            row.put("user", r.userId());
            row.put("session", r.sessionId());
            row.put("attempts", r.attempts());
            row.put("created", Format.time(r.createdAt()));
            row.put("error", r.error().orElse(""));
            row.put("progress", progress(r, false));
            rows.add(row);
        }
        m.put("runs", rows);
        m.put("none", rows.isEmpty());
        page.next().ifPresent(p -> m.put("next", "/runs?" + kept + "cursor=" + Links.encode(RunListRequest.cursor(p))));
        layout.render(ctx, "runs", m);
    }

    /** "40 %, details (3 s ago)", the details only on the run's own page; "—" without a report. */
    private static String progress(Run run, boolean withDetails) {
        return run.progress().map(p -> p.percent() + " %"
                + (withDetails && p.details() != null ? ", " + p.details() : "")
                + " (" + Format.age(java.time.Duration.between(p.at(), java.time.Instant.now()).toMillis())
                + " ago)").orElse("—");
    }

    void show(Context ctx) {
        UUID id = Inputs.runId(ctx.pathParam("id"), "id");
        Run run = runs.get(id).orElseThrow(() -> ApiError.notFound("no run " + id));
        Map<String, Object> m = layout.model(ctx, "runs", "Run " + id, layout.topics());
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("id", id.toString());
        r.put("status", run.status().sql());
        r.put("cancellable", run.status() == RunStatus.PENDING || run.status() == RunStatus.RUNNING);
        r.put("finished", run.status().isFinished());
        r.put("attempts", run.attempts());
        r.put("error", run.error().orElse(null));
        r.put("user", run.userId());
        r.put("session", run.sessionId());
        r.put("input", run.input());
        r.put("created", Format.time(run.createdAt()));
        r.put("updated", Format.time(run.updatedAt()));
        r.put("next_attempt", run.nextAttemptAt().map(Format::time).orElse("—"));
        r.put("expires", run.expiresAt().map(Format::time).orElse("—"));
        r.put("timeout", run.timeout().map(Object::toString).orElse("the workers'"));
        // "running, last progress 3 s ago": how far its handler got, and how fresh that is.
        r.put("progress", progress(run, true));
        r.put("dead_letter_id", run.deadLetterId().orElse(null));
        r.put("republished", run.republished());
        m.put("run", r);
        List<Map<String, Object>> replies = new ArrayList<>();
        for (StoredReply reply : runs.replies(id)) {
            replies.add(Map.of("seq", reply.seq(), "role", reply.role(), "content", reply.content()));
        }
        m.put("replies", replies);
        List<Map<String, Object>> effects = new ArrayList<>();
        for (RecordedEffect e : runs.effects(id)) {
            Map<String, Object> em = new LinkedHashMap<>();
            em.put("name", e.name());
            em.put("key", e.idempotencyKey());
            em.put("initiated", Format.time(e.initiatedAt()));
            em.put("completed", e.completedAt().map(Format::time).orElse("in doubt"));
            em.put("result", e.result().orElse(""));
            effects.add(em);
        }
        m.put("effects", effects);
        m.put("no_effects", effects.isEmpty());
        layout.render(ctx, "run", m);
    }
}
