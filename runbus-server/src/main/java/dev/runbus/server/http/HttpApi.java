package dev.runbus.server.http;

import dev.runbus.Bus;
import dev.runbus.DeadLetter;
import dev.runbus.DeadLetterAlreadyReplayedException;
import dev.runbus.Inspector;
import dev.runbus.NoSuchDeadLetterException;
import dev.runbus.Scheduled;
import dev.runbus.runs.IdempotencyConflictException;
import dev.runbus.runs.IllegalRunTransitionException;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Run;
import dev.runbus.runs.RunNotFoundException;
import dev.runbus.runs.RunStoreException;
import dev.runbus.runs.Runs;
import dev.runbus.runs.SubmitResult;
import dev.runbus.server.Json;
import dev.runbus.server.Metrics;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import dev.runbus.server.Views;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.javalin.json.JavalinJackson;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP API of {@code runbus serve}: thin routes over the runs layer, the dead letters, the scheduled entries
 * and the inspector.
 * Errors are JSON objects {@code {"error": "...", "field": "..."}} with the matching status code.
 */
public final class HttpApi implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

    private final Runs runs;
    private final Bus bus;
    private final DataSource db;
    private final Metrics metrics;
    private final Settings settings;
    private final int maxBody;
    private final Javalin app;

    private HttpApi(Runs runs, Bus bus, DataSource db, Metrics metrics, Settings settings) {
        this.runs = runs;
        this.bus = bus;
        this.db = db;
        this.metrics = metrics;
        this.settings = settings;
        this.maxBody = settings.integer(Setting.MAX_BODY, 1);
        this.app = Javalin.create(config -> {
            config.showJavalinBanner = false;
            config.http.maxRequestSize = maxBody;
            config.jsonMapper(new JavalinJackson(Json.MAPPER, false));
        });
        routes();
    }

    /** Starts listening; returns once the port is bound. */
    public static HttpApi start(Runs runs, Bus bus, DataSource db, Metrics metrics, Settings settings) {
        HttpApi api = new HttpApi(runs, bus, db, metrics, settings);
        api.app.start(settings.get(Setting.HOST), settings.integer(Setting.PORT, 0));
        return api;
    }

    public int port() {
        return app.port();
    }

    private void routes() {
        app.post("/v1/runs", this::submit);
        app.get("/v1/runs/{id}", this::getRun);
        app.get("/v1/runs/{id}/events", this::events);
        app.get("/v1/dead-letters", this::deadLetters);
        app.post("/v1/dead-letters/{id}/replay", this::replay);
        app.get("/v1/scheduled", this::scheduled);
        app.delete("/v1/scheduled/{id}", this::cancelScheduled);
        app.get("/v1/streams", this::streams);
        app.get("/v1/streams/{topic}/partitions", this::partitions);
        app.get("/health", this::health);
        app.get("/metrics", ctx -> ctx.contentType("text/plain; version=0.0.4; charset=utf-8")
                .result(metrics.render(bus, db, settings)));

        app.exception(ApiError.class, (e, ctx) -> error(ctx, e.status, e.getMessage(), e.field));
        app.exception(IdempotencyConflictException.class, (e, ctx) -> error(ctx, 409, e.getMessage(), "idempotency_key"));
        app.exception(HttpResponseException.class, (e, ctx) -> error(ctx, e.getStatus(), e.getMessage(), null));
        app.exception(IllegalArgumentException.class, (e, ctx) -> error(ctx, 400, e.getMessage(), null));
        app.exception(RunStoreException.class, (e, ctx) -> {
            log.warn("{} {}: PostgreSQL failed", ctx.method(), ctx.path(), e);
            error(ctx, 503, "the database is unavailable: " + e.getMessage(), null);
        });
        app.exception(Exception.class, (e, ctx) -> {
            log.warn("{} {} failed", ctx.method(), ctx.path(), e);
            error(ctx, 500, "internal error: " + e.getMessage(), null);
        });
        app.error(404, ctx -> {
            if (ctx.result() == null || ctx.result().isEmpty()) {
                error(ctx, 404, "no such endpoint: " + ctx.method() + " " + ctx.path(), null);
            }
        });
    }

    private void submit(Context ctx) {
        String type = ctx.contentType();
        if (type == null || !type.toLowerCase().startsWith("application/json")) {
            throw new ApiError(415, "Content-Type must be application/json, got " + (type == null ? "none" : type),
                    null);
        }
        if (ctx.contentLength() > maxBody) {
            throw new ApiError(413, "body of " + ctx.contentLength() + " bytes is larger than the limit of " + maxBody,
                    null);
        }
        byte[] body = ctx.bodyAsBytes();
        if (body.length > maxBody) {
            throw new ApiError(413, "body is larger than the limit of " + maxBody + " bytes", null);
        }
        NewRun request = SubmitRequest.parse(body, ctx.header("Idempotency-Key"));
        SubmitResult r = runs.submit(request);
        (r.created() ? metrics.runsCreated : metrics.runsDeduplicated).increment();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("run_id", r.runId().toString());
        out.put("status", r.status().sql());
        out.put("created", r.created());
        ctx.status(r.created() ? 201 : 200).json(out);
    }

    private void getRun(Context ctx) {
        UUID id = runId(ctx);
        Run run = runs.get(id).orElseThrow(() -> ApiError.notFound("no run " + id));
        Map<String, Object> out = Views.run(run);
        List<Map<String, Object>> replies = new ArrayList<>();
        runs.replies(id).forEach(r -> replies.add(Map.of("seq", r.seq(), "role", r.role(), "content", r.content())));
        out.put("replies", replies);
        ctx.json(out);
    }

    private void events(Context ctx) throws Exception {
        UUID id = runId(ctx);
        if (runs.get(id).isEmpty()) {
            throw ApiError.notFound("no run " + id);
        }
        ctx.res().setStatus(200);
        ctx.res().setContentType("text/event-stream; charset=utf-8");
        ctx.res().setHeader("Cache-Control", "no-cache");
        ctx.res().setHeader("X-Accel-Buffering", "no");
        try {
            new RunEventStream(runs).stream(id, ctx.res().getOutputStream());
        } catch (java.io.IOException clientGone) {
            log.debug("event stream of run {} closed by the client", id);
        }
    }

    private void deadLetters(Context ctx) {
        String topic = Optional.ofNullable(ctx.queryParam("topic")).orElse(settings.get(Setting.TOPIC));
        int limit = intParam(ctx, "limit", 100);
        List<Map<String, Object>> out = new ArrayList<>();
        for (DeadLetter d : bus.deadLetters().list(topic, ctx.queryParam("after"), limit)) {
            out.add(Views.deadLetter(d));
        }
        ctx.json(Map.of("topic", topic, "dead_letters", out));
    }

    private void replay(Context ctx) {
        String topic = Optional.ofNullable(ctx.queryParam("topic")).orElse(settings.get(Setting.TOPIC));
        String id = ctx.pathParam("id");
        DeadLetter dl = bus.deadLetters().get(topic, id)
                .orElseThrow(() -> ApiError.notFound("no dead letter " + id + " in topic " + topic));
        try {
            Optional<UUID> runId = runs.runOf(dl);
            if (runId.isPresent()) {
                if (dl.replayedAs().isPresent()) {
                    throw new ApiError(409, "dead letter " + id + " was already replayed as " + dl.replayedAs().get(),
                            null);
                }
                Optional<String> current = runs.get(runId.get()).flatMap(Run::deadLetterId);
                if (current.isPresent() && !current.get().equals(id)) {
                    throw new ApiError(409, "dead letter " + id + " is not the current one of run " + runId.get()
                            + " (" + current.get() + "): replay that one", null);
                }
                runs.replay(runId.get());
                ctx.status(202).json(Map.of("dead_letter_id", id, "run_id", runId.get().toString(), "status", "pending"));
            } else {
                String streamId = bus.deadLetters().replay(topic, id);
                ctx.status(202).json(Map.of("dead_letter_id", id, "stream_id", streamId));
            }
        } catch (DeadLetterAlreadyReplayedException | IllegalRunTransitionException e) {
            throw new ApiError(409, e.getMessage(), null);
        } catch (NoSuchDeadLetterException | RunNotFoundException e) {
            throw ApiError.notFound(e.getMessage());
        }
    }

    /** The topic's scheduled entries, soonest first, and how many there are in all. */
    private void scheduled(Context ctx) {
        String topic = Optional.ofNullable(ctx.queryParam("topic")).orElse(settings.get(Setting.TOPIC));
        int limit = intParam(ctx, "limit", 20);
        List<Map<String, Object>> entries = new ArrayList<>();
        for (Scheduled.ScheduledEntry e : bus.scheduled().list(topic, limit)) {
            entries.add(Views.scheduled(e));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("topic", topic);
        out.put("count", bus.scheduled().count(topic));
        out.put("entries", entries);
        ctx.json(out);
    }

    private void cancelScheduled(Context ctx) {
        String topic = Optional.ofNullable(ctx.queryParam("topic")).orElse(settings.get(Setting.TOPIC));
        String id = ctx.pathParam("id");
        if (!bus.scheduled().cancel(topic, id)) {
            throw ApiError.notFound("no scheduled entry " + id + " on " + topic);
        }
        ctx.status(204);
    }

    private void streams(Context ctx) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Inspector.StreamInfo s : bus.inspector().streams()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("topic", s.topic());
            m.put("length", s.length());
            m.put("dead_letters", s.deadLetters());
            m.put("scheduled", bus.scheduled().count(s.topic()));
            List<Map<String, Object>> groups = new ArrayList<>();
            for (Inspector.GroupInfo g : bus.inspector().groups(s.topic())) {
                Map<String, Object> gm = new LinkedHashMap<>();
                gm.put("name", g.name());
                gm.put("pending", g.pending());
                gm.put("lag", g.lag());
                gm.put("last_delivered_id", g.lastDeliveredId());
                List<Map<String, Object>> consumers = new ArrayList<>();
                for (Inspector.ConsumerInfo c : bus.inspector().consumers(s.topic(), g.name())) {
                    consumers.add(Map.of("name", c.name(), "pending", c.pending(), "idle_ms", c.idleMillis(),
                            "alive", c.alive()));
                }
                gm.put("consumers", consumers);
                groups.add(gm);
            }
            m.put("groups", groups);
            out.add(m);
        }
        ctx.json(Map.of("streams", out));
    }

    private void health(Context ctx) {
        Map<String, Object> out = new LinkedHashMap<>();
        boolean ok = true;
        try {
            bus.inspector().stream(settings.get(Setting.TOPIC));
            out.put("redis", "ok");
        } catch (RuntimeException e) {
            out.put("redis", "down: " + e.getMessage());
            ok = false;
        }
        try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
            st.execute("SELECT 1");
            out.put("postgres", "ok");
        } catch (Exception e) {
            out.put("postgres", "down: " + e.getMessage());
            ok = false;
        }
        out.put("status", ok ? "ok" : "down");
        ctx.status(ok ? 200 : 503).json(out);
    }

    /** The topic's partitions as {@code group} (default: the workers' group) sees them: a JSON array. */
    private void partitions(Context ctx) {
        String group = Optional.ofNullable(ctx.queryParam("group")).orElse(settings.get(Setting.GROUP));
        List<Map<String, Object>> out = new ArrayList<>();
        for (Inspector.PartitionInfo p : bus.inspector().partitions(ctx.pathParam("topic"), group)) {
            out.add(Views.partition(p));
        }
        ctx.json(out);
    }

    private static UUID runId(Context ctx) {
        String raw = ctx.pathParam("id");
        try {
            return UUID.fromString(raw);
        } catch (IllegalArgumentException e) {
            throw ApiError.badRequest("run id must be a UUID, got '" + raw + "'", "id");
        }
    }

    private static int intParam(Context ctx, String name, int fallback) {
        String v = ctx.queryParam(name);
        if (v == null) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(v);
            if (n < 1 || n > 10_000) {
                throw ApiError.badRequest("query parameter '" + name + "' must be between 1 and 10000", name);
            }
            return n;
        } catch (NumberFormatException e) {
            throw ApiError.badRequest("query parameter '" + name + "' must be a number, got '" + v + "'", name);
        }
    }

    private static void error(Context ctx, int status, String message, String field) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", message);
        if (field != null) {
            body.put("field", field);
        }
        ctx.status(status).json(body);
    }

    /** Stops accepting requests; requests in progress finish. */
    @Override
    public void close() {
        app.stop();
    }
}
