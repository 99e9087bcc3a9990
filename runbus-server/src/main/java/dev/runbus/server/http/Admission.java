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
 * Routes without a scope (the sign-in, the assets, the OpenAPI document) have no caller: they are counted by the
 * client's address, so that nobody reaches a thread without passing here, and in a pool of their own holding an
 * eighth of {@code --max-in-flight} ({@link #openPool}): anyone may knock at the sign-in, so those who knock must
 * not take the places of callers who have signed in. Two kinds of route are not counted in flight:
 * <ul>
 *   <li>event streams: they hold no thread once their response has started (the request goes asynchronous) and have
 *   a cap of their own per caller, {@code --max-event-streams}; counted here, sixteen ten-minute streams would take
 *   half a caller's places for requests that hold threads;</li>
 *   <li>{@code /health}, so that a server at its cap still says it is up: it reads no body and answers from what
 *   the server already knows.</li>
 * </ul>
 */
final class Admission {

    private static final String HELD = "runbus.in-flight";
    private static final String HELD_IN = "runbus.in-flight-pool";

    private final RequestsInFlight inFlight;
    private final RequestsInFlight open;
    private final RateBuckets reads;
    private final Set<String> notCounted;
    private final Set<String> exempt;

    /**
     * @param notCounted route paths (as declared) of long-lived asynchronous requests: rate-limited, not counted in
     *                   flight
     * @param exempt     route paths (as declared) of open routes neither rate-limited nor counted ({@code /health})
     */
    Admission(RequestsInFlight inFlight, RateBuckets reads, Set<String> notCounted, Set<String> exempt) {
        this.inFlight = inFlight;
        this.open = openPool(inFlight);
        this.reads = reads;
        this.notCounted = Set.copyOf(notCounted);
        this.exempt = Set.copyOf(exempt);
    }

    void admit(Context ctx) {
        if (exempt.contains(ctx.endpointHandlerPath())) {
            return;
        }
        boolean unauthenticated = ctx.routeRoles().isEmpty();
        String key = unauthenticated ? Caller.anonymous(ctx.ip()).key() : AccessLayer.caller(ctx).key();
        if (ctx.method() == HandlerType.GET || ctx.method() == HandlerType.HEAD) {
            long wait = reads.acquire(key);
            if (wait > 0) {
                throw new ApiError(429, "too many reads: slow down", null, RateBuckets.retryAfterSeconds(wait));
            }
        }
        if (notCounted.contains(ctx.endpointHandlerPath())) {
            return;
        }
        RequestsInFlight pool = unauthenticated ? open : inFlight;
        switch (pool.acquire(key)) {
            case ADMITTED -> {
                ctx.attribute(HELD, key);
                ctx.attribute(HELD_IN, pool);
            }
            case CALLER_AT_CAP -> throw new ApiError(503, "too many requests in flight for this caller (at most "
                    + pool.perCaller() + "): wait for some to finish", null, 1);
            case SERVER_AT_CAP -> throw new ApiError(503, "the server is busy (" + pool.overall() + " requests in"
                    + " flight" + (unauthenticated ? " without credentials" : "") + "): try again", null, 1);
        }
    }

    /** Gives back the request's place, once; nothing for a request that held none. */
    void release(Context ctx) {
        String key = ctx.attribute(HELD);
        RequestsInFlight pool = ctx.attribute(HELD_IN);
        if (key != null && pool != null) {
            ctx.req().removeAttribute(HELD);
            ctx.req().removeAttribute(HELD_IN);
            pool.release(key);
        }
    }

    /**
     * The pool of routes without a scope: an eighth of the overall cap (at least one) on top of it, each address
     * with the per-caller cap at most. At their highest ({@code --max-in-flight} 200) the two pools hold 225 of
     * Jetty's 250 threads, and the rest answer {@code /health} and the refusals.
     */
    static RequestsInFlight openPool(RequestsInFlight withCredentials) {
        int overall = Math.max(1, withCredentials.overall() / 8);
        return new RequestsInFlight(Math.min(withCredentials.perCaller(), overall), overall);
    }
}
