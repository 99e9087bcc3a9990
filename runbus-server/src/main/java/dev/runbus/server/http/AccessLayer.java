package dev.runbus.server.http;

import io.javalin.http.Context;
import io.javalin.security.RouteRole;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The one check in front of every route ({@code beforeMatched}): a route names the {@link Scope} it needs; the
 * request must come from a caller an {@link Authenticator} recognises (else 401) holding that scope (else 403).
 * Routes without a scope ({@code /health}) are open. A server without tokens lets every request through as an
 * anonymous caller counted by its address; {@code serve} allows that only on a loopback address or with
 * {@code --insecure-no-auth}.
 */
final class AccessLayer {

    private static final String CALLER = "runbus.caller";

    private final List<Authenticator> authenticators;
    private final boolean open;

    /** @param authenticators tried in order; none: every request is let through (no tokens configured) */
    AccessLayer(List<Authenticator> authenticators) {
        this.authenticators = List.copyOf(authenticators);
        this.open = authenticators.isEmpty();
    }

    void check(Context ctx) {
        Set<RouteRole> roles = ctx.routeRoles();
        if (roles.isEmpty()) {
            return;
        }
        Caller caller = open ? Caller.anonymous(ctx.ip()) : authenticate(ctx)
                .orElseThrow(() -> {
                    ctx.header("WWW-Authenticate", "Bearer realm=\"runbus\"");
                    return new ApiError(401, "authentication required: send Authorization: Bearer <token>", null);
                });
        for (RouteRole role : roles) {
            if (!(role instanceof Scope scope) || !caller.may(scope)) {
                throw new ApiError(403, "this token may not do this: it needs the '"
                        + (role instanceof Scope s ? s.label() : role) + "' scope", null);
            }
        }
        ctx.attribute(CALLER, caller);
    }

    private Optional<Caller> authenticate(Context ctx) {
        for (Authenticator a : authenticators) {
            Optional<Caller> c = a.authenticate(ctx);
            if (c.isPresent()) {
                return c;
            }
        }
        return Optional.empty();
    }

    /** The caller {@link #check} established for this request. */
    static Caller caller(Context ctx) {
        Caller c = ctx.attribute(CALLER);
        if (c == null) {
            throw new IllegalStateException("no caller: the route " + ctx.endpointHandlerPath() + " has no scope");
        }
        return c;
    }
}
