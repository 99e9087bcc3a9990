package dev.runbus.server.http;

import dev.runbus.Bus;
import dev.runbus.RunbusException;
import dev.runbus.runs.IdempotencyConflictException;
import dev.runbus.runs.InvalidRunException;
import dev.runbus.runs.InvalidScheduleException;
import dev.runbus.runs.RunStoreException;
import dev.runbus.runs.Runs;
import dev.runbus.runs.ScheduleNotFoundException;
import dev.runbus.server.Json;
import dev.runbus.server.Metrics;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.javalin.json.JavalinJackson;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP API of {@code runbus serve}: thin routes over the runs layer, the dead letters, the scheduled entries
 * and the inspector, every one behind the {@link AccessLayer}. Errors are JSON objects
 * {@code {"error": "...", "field": "...", "request_id": "..."}} with the matching status code; a server-side
 * failure answers a fixed message and its request id, and the details go to the log under that id. Every
 * response carries {@code X-Request-Id}.
 */
public final class HttpApi implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HttpApi.class);
    private static final String REQUEST_ID = "runbus.request-id";
    /** The event stream's route: long-lived, without a thread, and not counted among requests in flight. */
    private static final String EVENTS = "/v1/runs/{id}/events";
    /** Open to all, and answered even when the server is at its in-flight cap. */
    private static final String HEALTH = "/health";

    /**
     * What {@link #check} found: the tokens, whether the server runs open on a non-loopback address, the key
     * store of {@code --tls-cert}/{@code --tls-key} (null: plain HTTP), and the dashboard's sign-in sessions (null
     * without tokens: then the pages follow the API's rules without tokens).
     */
    public record Access(ApiTokens tokens, boolean insecure, KeyStore tls, BrowserSessions sessions,
                         PublicUrl publicUrl) {

        /** Whether browsers reach this server over HTTPS: its own TLS, or a proxy's that --public-url names. */
        boolean https() {
            return tls != null || publicUrl != null && publicUrl.https();
        }
    }

    private final Runs runs;
    private final Bus bus;
    private final DataSource db;
    private final Metrics metrics;
    private final Settings settings;
    private final Access access;
    private final EventStreams events;
    private final HealthCheck health;
    private final Javalin app;
    /** The API's routes, registered before the pages: what the OpenAPI document and docs/http-api.md describe. */
    private List<Route> apiRoutes = List.of();

    private HttpApi(Runs runs, Bus bus, DataSource db, Metrics metrics, Settings settings, Access access,
                    Consumer<Javalin> pages) {
        this.runs = runs;
        this.bus = bus;
        this.db = db;
        this.metrics = metrics;
        this.settings = settings;
        this.access = access;
        this.events = new EventStreams(runs, settings.integer(Setting.MAX_EVENT_STREAMS, 1));
        this.health = new HealthCheck(bus, db, settings.get(Setting.TOPIC));
        this.app = Javalin.create(config -> {
            config.showJavalinBanner = false;
            config.http.prefer405over404 = true;
            config.http.maxRequestSize = settings.integer(Setting.MAX_BODY, 1);
            config.jsonMapper(new JavalinJackson(Json.MAPPER, false));
            JettySetup.configure(config, settings, access.tls());
        });
        routes();
        apiRoutes = allRoutes();
        pages.accept(app);
        answerHead();
    }

    /**
     * Checks what the API needs before anything starts, beyond what {@link Settings#validate()} checks: the tokens,
     * the TLS files' contents, and that a server without tokens listens on a loopback address only, unless
     * {@code --insecure-no-auth} says otherwise.
     *
     * @throws IllegalArgumentException naming the setting that is wrong
     */
    public static Access check(Settings s) {
        ApiTokens tokens = ApiTokens.load(s);
        boolean insecureAllowed = s.bool(Setting.INSECURE_NO_AUTH);
        String host = s.get(Setting.HOST);
        boolean loopback;
        try {
            loopback = InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--host " + host + " is not an address of this machine");
        }
        if (tokens.isEmpty() && !loopback && !insecureAllowed) {
            throw new IllegalArgumentException("refusing to serve " + host + " without API tokens: anyone who reaches"
                    + " it could submit runs, read their replies and replay dead letters. Give --api-tokens-file"
                    + " (runbus token create makes a token), listen on 127.0.0.1, or accept the risk with"
                    + " --insecure-no-auth");
        }
        KeyStore tls = s.isSet(Setting.TLS_CERT) && s.isSet(Setting.TLS_KEY)
                ? PemKeyStore.load(Path.of(s.get(Setting.TLS_CERT)), Path.of(s.get(Setting.TLS_KEY))) : null;
        PublicUrl publicUrl = s.isSet(Setting.PUBLIC_URL) ? PublicUrl.parse(s.get(Setting.PUBLIC_URL)) : null;
        boolean https = tls != null || publicUrl != null && publicUrl.https();
        return new Access(tokens, tokens.isEmpty() && !loopback, tls,
                tokens.isEmpty() ? null : new BrowserSessions(tokens, publicUrl, https,
                        RateBuckets.perMinute(s.integer(Setting.SIGN_IN_RATE, 0), System::nanoTime,
                                RateBuckets.DEFAULT_MAX_KEYS), System::nanoTime), publicUrl);
    }

    /**
     * Starts listening; returns once the port is bound.
     *
     * @param pages registers the pages served beside the API (the dashboard), after the API's routes and behind
     *              the same access layer; a page route names the {@link Scope} it needs like an API route
     */
    public static HttpApi start(Runs runs, Bus bus, DataSource db, Metrics metrics, Settings settings, Access access,
                                Consumer<Javalin> pages) {
        HttpApi api = new HttpApi(runs, bus, db, metrics, settings, access, pages);
        if (access.insecure()) {
            log.warn("serving {} WITHOUT AUTHENTICATION (--insecure-no-auth): anyone who reaches the port can submit"
                    + " runs, read their replies and replay dead letters", settings.get(Setting.HOST));
        }
        try {
            api.app.start();
        } catch (RuntimeException e) {
            api.events.close();
            throw new IllegalStateException("cannot listen on " + settings.get(Setting.HOST) + ":"
                    + settings.get(Setting.PORT) + ": " + rootMessage(e), e);
        }
        return api;
    }

    public int port() {
        return app.port();
    }

    /** A route of the API: its method, its path as registered, and the scope it needs (null: open to all). */
    public record Route(String method, String path, Scope scope) {
    }

    /** The API's routes as registered, in order: what docs/http-api.md lists, and what its test compares with. */
    public List<Route> registeredRoutes() {
        return apiRoutes;
    }

    /** The pages' routes (the dashboard's), as registered after the API's. */
    public List<Route> pageRoutes() {
        List<Route> out = new java.util.ArrayList<>(allRoutes());
        out.removeAll(apiRoutes);
        return out;
    }

    /**
     * The caller the access layer established for a request to a route with a scope: for pages, which show an
     * action only to a caller who may take it.
     */
    public static Caller caller(Context ctx) {
        return AccessLayer.caller(ctx);
    }

    /**
     * A request for a page rather than for the API: its 401 sends a browser to the sign-in page, its other errors
     * are short HTML.
     */
    static boolean isPage(Context ctx) {
        String path = ctx.path();
        return (ctx.method() == io.javalin.http.HandlerType.GET || ctx.method() == io.javalin.http.HandlerType.HEAD)
                && !path.startsWith("/v1/") && !path.equals("/metrics")
                && !path.equals("/health");
    }

    /** The routes as registered, without the HEAD routes that mirror every GET ({@link #answerHead}). */
    private List<Route> allRoutes() {
        List<Route> out = new java.util.ArrayList<>();
        for (io.javalin.router.ParsedEndpoint parsed : app.unsafeConfig().pvt.internalRouter.allHttpHandlers()) {
            io.javalin.router.Endpoint e = parsed.getEndpoint();
            if (e.getMethod().isHttpMethod() && e.getMethod() != io.javalin.http.HandlerType.HEAD) {
                Scope scope = e.getRoles().stream().filter(Scope.class::isInstance).map(Scope.class::cast)
                        .findFirst().orElse(null);
                out.add(new Route(e.getMethod().name(), e.getPath(), scope));
            }
        }
        return out;
    }

    /** How callers are checked, for the start-up banner. */
    public String authentication() {
        if (!access.tokens().isEmpty()) {
            return access.tokens().size() + " API token" + (access.tokens().size() == 1 ? "" : "s");
        }
        return access.insecure() ? "WARNING: no authentication (--insecure-no-auth)"
                : "no API tokens: loopback address only";
    }

    /** Whether this server speaks HTTPS. */
    public boolean tls() {
        return access.tls() != null;
    }

    private void routes() {
        AccessLayer layer = access.tokens().isEmpty()
                ? AccessLayer.withoutTokens(access.insecure() ? null : settings.get(Setting.HOST), access.publicUrl())
                : new AccessLayer(List.of(new BearerTokens(access.tokens()), access.sessions()));
        RequestBody body = RequestBody.of(settings);
        RunEndpoints runRoutes = new RunEndpoints(runs, body, new SubmissionRate(
                settings.integer(Setting.SUBMIT_RATE, 0), System::nanoTime), events, access.sessions());
        BusEndpoints busRoutes = new BusEndpoints(runs, bus, settings);
        FlowEndpoints flowRoutes = new FlowEndpoints(runs, body);
        ScheduleEndpoints scheduleRoutes = new ScheduleEndpoints(runs.schedules(), body);

        app.before(ctx -> {
            String id = RequestIds.next();
            ctx.attribute(REQUEST_ID, id);
            ctx.header("X-Request-Id", id);
            if (access.https()) {
                // Browsers that reached this server over HTTPS keep doing so: never a cookie over plain HTTP.
                ctx.header("Strict-Transport-Security", "max-age=31536000");
            }
        });
        app.before(AccessLayer::refuseMethodOverride);
        // Every route, with or without a scope: a body declared larger than --max-body is refused before anything
        // reads it, and the routes that read one read it through the same bounded reader (RequestBody).
        app.before(body::refuseDeclaredTooLarge);
        app.beforeMatched(layer::check);
        Admission admission = new Admission(new RequestsInFlight(settings.integer(Setting.MAX_IN_FLIGHT_PER_CALLER, 1),
                settings.integer(Setting.MAX_IN_FLIGHT, 1)), new RateBuckets(settings.integer(Setting.READ_RATE, 0),
                System::nanoTime, RateBuckets.DEFAULT_MAX_KEYS), Set.of(EVENTS), Set.of(HEALTH));
        app.beforeMatched(admission::admit);
        app.after(admission::release);

        app.post("/v1/runs", IncomingTraceContext.around(runRoutes::submit), Scope.SUBMIT);
        app.get("/v1/runs", runRoutes::list, Scope.READ);
        app.get("/v1/runs/{id}", runRoutes::get, Scope.READ);
        app.get(EVENTS, runRoutes::events, Scope.READ);
        app.post("/v1/runs/{id}/cancel", runRoutes::cancel, Scope.ADMIN);
        app.get("/v1/dead-letters", busRoutes::deadLetters, Scope.READ);
        app.post("/v1/dead-letters/{id}/replay", busRoutes::replay, Scope.ADMIN);
        app.delete("/v1/dead-letters/{id}", busRoutes::purge, Scope.ADMIN);
        app.get("/v1/scheduled", busRoutes::scheduled, Scope.READ);
        app.delete("/v1/scheduled/{id}", busRoutes::cancelScheduled, Scope.ADMIN);
        app.get("/v1/streams", busRoutes::streams, Scope.READ);
        app.get("/v1/streams/{topic}/partitions", busRoutes::partitions, Scope.READ);
        app.get("/v1/flow/overrides", flowRoutes::list, Scope.READ);
        app.put("/v1/flow/overrides/{flowKey}", flowRoutes::put, Scope.ADMIN);
        app.delete("/v1/flow/overrides/{flowKey}", flowRoutes::clear, Scope.ADMIN);
        app.get("/v1/schedules", scheduleRoutes::list, Scope.READ);
        app.get("/v1/schedules/{name}", scheduleRoutes::get, Scope.READ);
        app.put("/v1/schedules/{name}", scheduleRoutes::put, Scope.ADMIN);
        app.delete("/v1/schedules/{name}", scheduleRoutes::delete, Scope.ADMIN);
        app.post("/v1/schedules/{name}/pause", scheduleRoutes::pause, Scope.ADMIN);
        app.post("/v1/schedules/{name}/resume", scheduleRoutes::resume, Scope.ADMIN);
        app.get("/v1/schedules/{name}/preview", scheduleRoutes::preview, Scope.READ);
        app.post("/v1/schedules/{name}/backfill", scheduleRoutes::backfill, Scope.ADMIN);
        app.get("/metrics", ctx -> ctx.contentType(Metrics.CONTENT_TYPE).result(metrics.scrape()), Scope.READ);
        app.get("/v1/openapi.json", new OpenApiDocument()::serve);
        app.get(HEALTH, this::health);

        app.exception(ApiError.class, (e, ctx) -> {
            if (e.retryAfterSeconds > 0) {
                ctx.header("Retry-After", Long.toString(e.retryAfterSeconds));
            }
            error(ctx, e.status, e.getMessage(), e.field);
        });
        app.exception(IdempotencyConflictException.class, (e, ctx) -> error(ctx, 409, e.getMessage(), "idempotency_key"));
        app.exception(HttpResponseException.class, (e, ctx) -> error(ctx, e.getStatus(), e.getMessage(), null));
        app.exception(InvalidRunException.class, (e, ctx) -> {
            String field = SubmitRequest.jsonField(e.field());
            error(ctx, 400, "field '" + field + "' " + e.problem(), field);
        });
        app.exception(InvalidScheduleException.class, (e, ctx) -> error(ctx, 400, e.getMessage(), e.field()));
        app.exception(ScheduleNotFoundException.class, (e, ctx) -> error(ctx, 404, e.getMessage(), null));
        app.exception(IllegalArgumentException.class, (e, ctx) -> error(ctx, 400, e.getMessage(), null));
        app.exception(RunStoreException.class, (e, ctx) -> {
            if (tookTooLong(e)) {
                // --api-statement-timeout: the database is up, the read was too costly; one line is enough.
                log.warn("{} {}: the read passed --api-statement-timeout [request {}]", ctx.method(), ctx.path(),
                        requestId(ctx));
                ctx.header("Retry-After", "1");
                error(ctx, 503, "the read took longer than the server allows: narrow it or try again", null);
                return;
            }
            unavailable(ctx, "the database", e);
        });
        app.exception(RunbusException.class, (e, ctx) -> unavailable(ctx, "Redis", e));
        app.exception(io.lettuce.core.RedisConnectionException.class, (e, ctx) -> unavailable(ctx, "Redis", e));
        app.exception(io.lettuce.core.RedisCommandTimeoutException.class, (e, ctx) -> unavailable(ctx, "Redis", e));
        app.exception(Exception.class, (e, ctx) -> {
            log.warn("{} {} failed [request {}]", ctx.method(), ctx.path(), requestId(ctx), e);
            error(ctx, 500, "internal error", null);
        });
        app.error(404, ctx -> {
            if (ctx.result() == null || ctx.result().isEmpty()) {
                error(ctx, 404, "no such endpoint", null);
            }
        });
        app.error(405, ctx -> {
            String allowed = String.join(", ", allowedMethods(ctx.path()));
            ctx.header("Allow", allowed);
            error(ctx, 405, "method " + ctx.method() + " is not allowed here (allowed: " + allowed + ")", null);
        });
    }

    /**
     * HEAD for every GET route (RFC 9110 asks every general-purpose server for it), through the same access layer:
     * Javalin would otherwise answer HEAD for a GET route itself, with an empty 200 and without the route's scope
     * ever being checked. The GET's own handler runs; Jetty sends its headers and drops its body. An event stream's
     * HEAD says whether the run exists and what type its stream has, without opening one.
     */
    private void answerHead() {
        List<io.javalin.router.Endpoint> gets = app.unsafeConfig().pvt.internalRouter.allHttpHandlers().stream()
                .map(io.javalin.router.ParsedEndpoint::getEndpoint)
                .filter(e -> e.getMethod() == io.javalin.http.HandlerType.GET).toList();
        for (io.javalin.router.Endpoint get : gets) {
            io.javalin.http.Handler handler = get.getPath().equals(EVENTS) ? ctx -> {
                java.util.UUID id = Inputs.runId(ctx.pathParam("id"), "id");
                runs.get(id).orElseThrow(() -> ApiError.notFound("no run " + id));
                ctx.contentType("text/event-stream");
            } : get.getHandler();
            app.head(get.getPath(), handler, get.getRoles().toArray(new io.javalin.security.RouteRole[0]));
        }
    }

    /** The methods some route takes at {@code path}: what a 405's {@code Allow} header lists. */
    private List<String> allowedMethods(String path) {
        List<String> out = new java.util.ArrayList<>();
        for (io.javalin.http.HandlerType type : List.of(io.javalin.http.HandlerType.GET, io.javalin.http.HandlerType.HEAD,
                io.javalin.http.HandlerType.POST, io.javalin.http.HandlerType.PUT, io.javalin.http.HandlerType.PATCH,
                io.javalin.http.HandlerType.DELETE)) {
            if (app.unsafeConfig().pvt.internalRouter.hasHttpHandlerEntry(type, path)) {
                out.add(type.name());
            }
        }
        return out;
    }

    /** PostgreSQL cancelled the statement at its statement_timeout (SQLSTATE 57014, query_canceled). */
    private static boolean tookTooLong(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.sql.SQLException sql && "57014".equals(sql.getSQLState())) {
                return true;
            }
        }
        return false;
    }

    /** A server runbus needs failed: a fixed message for the caller, the details in the log. */
    private static void unavailable(Context ctx, String what, Exception e) {
        log.warn("{} {}: {} failed [request {}]", ctx.method(), ctx.path(), what, requestId(ctx), e);
        ctx.header("Retry-After", "1");
        error(ctx, 503, what + " is unavailable: try again", null);
    }

    /** Open to all: up or down per server, never why (that goes to the log). */
    private void health(Context ctx) {
        Map<String, Object> out = health.current();
        if (access.insecure()) {
            out.put("warning", "serving without authentication (--insecure-no-auth)");
        }
        ctx.status("ok".equals(out.get("status")) ? 200 : 503).json(out);
    }

    private static String requestId(Context ctx) {
        String id = ctx.attribute(REQUEST_ID);
        return id == null ? "-" : id;
    }

    private static void error(Context ctx, int status, String message, String field) {
        if (isPage(ctx)) {
            pageError(ctx, status, message);
            return;
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", message);
        if (field != null) {
            body.put("field", field);
        }
        body.put("request_id", requestId(ctx));
        ctx.status(status).json(body);
    }

    /** A page's error: to sign in for a 401, else the message as short HTML. */
    private static void pageError(Context ctx, int status, String message) {
        if (status == 401) {
            String next = ctx.path() + (ctx.queryString() == null ? "" : "?" + ctx.queryString());
            ctx.status(303).header("Location", "/login?next=" + java.net.URLEncoder.encode(next,
                    java.nio.charset.StandardCharsets.UTF_8)).result("");
            return;
        }
        java.io.StringWriter page = new java.io.StringWriter();
        page.write("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>runbus: " + status
                + "</title></head><body><h1>" + status + "</h1><p id=\"error\">");
        // The pages' own escaping (Mustache's): the message may quote what the request carried.
        com.github.mustachejava.util.HtmlEscaper.escape(message, page);
        page.write("</p><p><a href=\"/\">Overview</a></p></body></html>");
        ctx.status(status).contentType("text/html; charset=utf-8").result(page.toString());
    }

    private static String rootMessage(Throwable e) {
        while (e.getCause() != null) {
            e = e.getCause();
        }
        return e.getMessage();
    }

    /**
     * Stops: event streams end first (their clients see the end of the response), then Jetty stops taking
     * requests and waits up to {@code --shutdown-timeout} for those in flight.
     */
    @Override
    public void close() {
        events.close();
        try {
            app.stop();
        } catch (RuntimeException e) {
            // Javalin's report that requests outlived the stop timeout: they are cut, and the stop goes on.
            log.warn("the HTTP API did not stop within the shutdown timeout; requests still in flight were cut", e);
        }
    }
}
