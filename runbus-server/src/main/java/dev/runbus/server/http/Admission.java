package dev.runbus.server.http;

import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import java.util.Set;

/**
 * What a caller may have the server do at once, checked after the {@link AccessLayer} knows who the caller is and
 * before the route runs (so before a body is read):
 * <ul>
 *   <li>reads ({@code GET}) per second per caller, a {@link RateBuckets} like the submission rate: 429 with
 *   {@code Retry-After} past it;</li>
 *   <li>requests in flight per caller and in all ({@link RequestsInFlight}): 503 with {@code Retry-After} past
 *   either cap. The place is given back when the request ends, whatever its outcome ({@link #release}, run as an
 *   {@code after} step, which Javalin runs after exceptions too).</li>
 * </ul>
 * Event streams are not counted in flight: they hold no thread once their response has started (the request goes
 * asynchronous) and have a cap of their own per caller, {@code --max-event-streams}; counted here, sixteen
 * ten-minute streams would take half a caller's places for requests that hold threads. Routes without a scope
 * ({@code /health}) have no caller and are not counted, so that a server at its cap still says it is up.
 */
final class Admission {

    private static final String HELD = "runbus.in-flight";

    private final RequestsInFlight inFlight;
    private final RateBuckets reads;
    private final Set<String> notCounted;

    /** @param notCounted route paths (as declared) of long-lived asynchronous requests, not counted in flight */
    Admission(RequestsInFlight inFlight, RateBuckets reads, Set<String> notCounted) {
        this.inFlight = inFlight;
        this.reads = reads;
        this.notCounted = Set.copyOf(notCounted);
    }

    void admit(Context ctx) {
        if (ctx.routeRoles().isEmpty()) {
            return;
        }
        String key = AccessLayer.caller(ctx).key();
        if (ctx.method() == HandlerType.GET) {
            long wait = reads.acquire(key);
            if (wait > 0) {
                throw new ApiError(429, "too many reads: slow down", null, RateBuckets.retryAfterSeconds(wait));
            }
        }
        if (notCounted.contains(ctx.endpointHandlerPath())) {
            return;
        }
        switch (inFlight.acquire(key)) {
            case ADMITTED -> ctx.attribute(HELD, key);
            case CALLER_AT_CAP -> throw new ApiError(503, "too many requests in flight for this caller (at most "
                    + inFlight.perCaller() + "): wait for some to finish", null, 1);
            case SERVER_AT_CAP -> throw new ApiError(503, "the server is busy (" + inFlight.overall()
                    + " requests in flight): try again", null, 1);
        }
    }

    /** Gives back the request's place, once; nothing for a request that held none. */
    void release(Context ctx) {
        String key = ctx.attribute(HELD);
        if (key != null) {
            ctx.req().removeAttribute(HELD);
            inFlight.release(key);
        }
    }
}
