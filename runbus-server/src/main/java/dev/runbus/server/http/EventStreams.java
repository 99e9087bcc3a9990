package dev.runbus.server.http;

import dev.runbus.runs.Run;
import dev.runbus.runs.Runs;
import dev.runbus.runs.StoredReply;
import dev.runbus.server.Json;
import io.javalin.http.Context;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /v1/runs/{id}/events}: server-sent events of runs, read from PostgreSQL (so they are right whichever
 * process executes the run). Events: {@code status} (status, attempts, error, next_attempt_at) on every change,
 * {@code progress} (percent, details, at) when its handler's latest report was written (at most once a second),
 * {@code reply} (seq, role, content) for each new reply, and {@code end} when the run is done, failed, cancelled or
 * expired.
 * A comment line after 15 s without an event keeps proxies from closing the connection; a stream ends after 10
 * minutes. Each event and each comment is flushed as it is written: Jetty would otherwise keep them in its response
 * buffer until that filled, and a follower would hear of its run only at the end.
 *
 * <p>No thread waits per follower: the request goes asynchronous, and one thread polls every followed run
 * every 100 ms, asking PostgreSQL for its status and the replies after the last one sent. Writes do not block
 * that thread: once the response is asynchronous they are non-blocking, and a follower whose client does not
 * read waits its turn with what it has to send (at most {@value #MAX_PENDING_BYTES} bytes) until its socket
 * takes more; one that has not for {@value #STALL_MILLIS} ms is dropped. So a stalled client delays no other.
 * Each caller (token, or address without tokens) may hold {@code perCaller} streams at once; past that the
 * request is refused with 503 and {@code Retry-After}.
 */
final class EventStreams implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EventStreams.class);
    private static final long POLL_MILLIS = 100;
    /** How long a stream may go without a write before a keep-alive comment goes out. */
    static final Duration KEEP_ALIVE = Duration.ofSeconds(15);
    private static final long MAX_MILLIS = 600_000;
    private static final long STALL_MILLIS = 30_000;
    private static final int MAX_PENDING_BYTES = 1 << 20;

    private final Runs runs;
    private final int perCaller;
    private final long keepAliveMillis;
    private final Set<Follower> followers = ConcurrentHashMap.newKeySet();
    /** Streams open per caller; an entry only while its caller has one, so addresses that come and go leave none. */
    private final RequestsInFlight open;
    private final ScheduledExecutorService poller;
    private volatile boolean closed;

    EventStreams(Runs runs, int perCaller) {
        this(runs, perCaller, KEEP_ALIVE);
    }

    /** @param keepAlive how long a stream may stay silent before a keep-alive comment (a test's is short) */
    EventStreams(Runs runs, int perCaller, Duration keepAlive) {
        this.runs = runs;
        this.perCaller = perCaller;
        this.keepAliveMillis = keepAlive.toMillis();
        this.open = new RequestsInFlight(perCaller, Integer.MAX_VALUE);
        this.poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "runbus-event-streams");
            t.setDaemon(true);
            return t;
        });
        poller.scheduleWithFixedDelay(this::pollAll, POLL_MILLIS, POLL_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * Answers the request with the run's events, or refuses it (404 unknown run, 503 too many streams).
     *
     * @param allowed whether the credentials the stream was opened with still hold, asked at every poll: a stream
     *                opened by a dashboard session ends when the session does (sign-out, expiry), so that a
     *                signed-out browser hears nothing more
     */
    void follow(Context ctx, UUID id, Caller caller, java.util.function.BooleanSupplier allowed) throws IOException {
        if (closed) {
            throw new ApiError(503, "the server is stopping: try again", null, 1);
        }
        String key = caller.key();
        if (open.acquire(key) != RequestsInFlight.Outcome.ADMITTED) {
            throw new ApiError(503, "too many event streams open for this caller (at most " + perCaller
                    + "): close one or try again later", null, 5);
        }
        Follower f;
        try {
            if (runs.get(id).isEmpty()) {
                throw ApiError.notFound("no run " + id);
            }
            ctx.res().setStatus(200);
            ctx.res().setContentType("text/event-stream; charset=utf-8");
            ctx.res().setHeader("Cache-Control", "no-cache");
            ctx.res().setHeader("X-Accel-Buffering", "no");
            ctx.res().flushBuffer();
            f = new Follower(id, ctx.req(), ctx.res().getOutputStream(), key, allowed);
        } catch (RuntimeException | IOException e) {
            open.release(key);
            throw e;
        }
        followers.add(f);
        if (closed) { // close() may have ended the followers between the check above and the add
            end(f);
        }
        ctx.future(() -> f.done);
    }

    private void pollAll() {
        for (Follower f : followers) {
            try {
                if (f.poll()) {
                    end(f);
                }
            } catch (IOException clientGone) {
                log.debug("event stream of run {} closed by the client", f.id);
                end(f);
            } catch (RuntimeException e) {
                // PostgreSQL unavailable for a moment: the stream stays, and is polled again next time.
                log.debug("polling run {} for its event stream failed", f.id, e);
            }
        }
    }

    private void end(Follower f) {
        if (followers.remove(f)) {
            open.release(f.callerKey);
            f.done.complete(null);
        }
    }

    /** Ends every stream (their clients see the response end) and stops polling. */
    @Override
    public void close() {
        closed = true;
        poller.shutdownNow();
        try {
            poller.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        followers.forEach(this::end);
    }

    /** One client following one run: what it was sent so far, and what waits for its socket. */
    private final class Follower {
        final UUID id;
        final HttpServletRequest request;
        final ServletOutputStream out;
        final String callerKey;
        final java.util.function.BooleanSupplier allowed;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final long start = System.currentTimeMillis();
        final StringBuilder pending = new StringBuilder();
        long lastWrite = start;
        long notReadySince;
        boolean nonBlocking;
        boolean ended;
        volatile boolean failed;
        String lastStatus;
        int lastSeq;
        /** When the latest progress sent was written; null before any. */
        java.time.Instant lastProgressAt;

        Follower(UUID id, HttpServletRequest request, ServletOutputStream out, String callerKey,
                 java.util.function.BooleanSupplier allowed) {
            this.id = id;
            this.request = request;
            this.out = out;
            this.callerKey = callerKey;
            this.allowed = allowed;
        }

        /** Reads what changed and sends what the socket takes; returns whether the stream is over. */
        boolean poll() throws IOException {
            if (failed || System.currentTimeMillis() - start > MAX_MILLIS || !allowed.getAsBoolean()) {
                return true;
            }
            if (!nonBlocking) {
                if (!request.isAsyncStarted()) {
                    return false; // the handler has not returned yet: writes must wait for the asynchronous mode
                }
                out.setWriteListener(new WriteListener() {
                    @Override
                    public void onWritePossible() {
                        // the poller looks at isReady() on its next round
                    }

                    @Override
                    public void onError(Throwable t) {
                        failed = true;
                    }
                });
                nonBlocking = true;
            }
            if (!ended && pending.length() < MAX_PENDING_BYTES) {
                read();
            }
            return send();
        }

        private void read() {
            Optional<Run> found = runs.get(id);
            if (found.isEmpty()) {
                ended = true;
                return;
            }
            Run run = found.get();
            String status = run.status().sql() + "/" + run.attempts() + "/" + run.error().orElse("") + "/"
                    + run.nextAttemptAt().map(Object::toString).orElse("");
            if (!status.equals(lastStatus)) {
                Map<String, Object> data = new LinkedHashMap<>();
                data.put("run_id", id.toString());
                data.put("status", run.status().sql());
                data.put("attempts", run.attempts());
                data.put("error", run.error().orElse(null));
                data.put("next_attempt_at", run.nextAttemptAt().map(Object::toString).orElse(null));
                event("status", data);
                lastStatus = status;
            }
            run.progress().ifPresent(p -> {
                if (!p.at().equals(lastProgressAt)) {
                    Map<String, Object> data = new LinkedHashMap<>();
                    data.put("percent", p.percent());
                    data.put("details", p.details());
                    data.put("at", p.at().toString());
                    event("progress", data);
                    lastProgressAt = p.at();
                }
            });
            for (StoredReply r : runs.replies(id, lastSeq)) {
                Map<String, Object> data = new LinkedHashMap<>();
                data.put("seq", r.seq());
                data.put("role", r.role());
                data.put("content", r.content());
                event("reply", data);
                lastSeq = r.seq();
            }
            if (run.status().isFinished()) {
                Map<String, Object> data = new LinkedHashMap<>();
                data.put("run_id", id.toString());
                data.put("status", run.status().sql());
                event("end", data);
                ended = true;
            } else if (pending.length() == 0 && System.currentTimeMillis() - lastWrite >= keepAliveMillis) {
                pending.append(": keep-alive\n\n");
            }
        }

        private void event(String name, Object data) {
            pending.append("event: ").append(name).append("\ndata: ").append(Json.write(data)).append("\n\n");
        }

        /** Writes what is pending if the socket takes it; returns whether the stream is over. */
        private boolean send() throws IOException {
            if (pending.length() == 0) {
                return ended;
            }
            if (!out.isReady()) {
                long now = System.currentTimeMillis();
                if (notReadySince == 0) {
                    notReadySince = now;
                }
                return now - notReadySince > STALL_MILLIS; // a client that reads nothing is dropped
            }
            notReadySince = 0;
            out.write(pending.toString().getBytes(StandardCharsets.UTF_8));
            pending.setLength(0);
            lastWrite = System.currentTimeMillis();
            // A write smaller than Jetty's buffer only fills the buffer: flush it so that the client has the event
            // now. isReady() is false when the write went out by itself and is still under way: nothing to flush.
            if (out.isReady()) {
                out.flush();
            }
            // Over once the end went out; the response completes when its last write has.
            return ended;
        }
    }
}
