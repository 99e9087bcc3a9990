package dev.runbus.server.http;

import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
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
 *
 * <p>Without tokens, "reaches the port" must not include a browser on this machine acting for another site, so
 * every request is first checked for what a browser sends on such a site's behalf:
 * <ul>
 *   <li>the {@code Host} must be a loopback name or address ({@code localhost}, {@code 127.x.x.x}, {@code [::1]})
 *   or the configured {@code --host}: a DNS-rebinding page reaches loopback under its own host name. Not checked
 *   with {@code --insecure-no-auth}, where clients use whatever name the network gives the machine;</li>
 *   <li>an {@code Origin} other than the request's own host, or {@code Sec-Fetch-Site} other than
 *   {@code same-origin} or {@code none}, is a page of another site (another port of localhost included);</li>
 *   <li>{@code POST}, {@code PUT} and {@code PATCH} must say {@code Content-Type: application/json} (else 415), a
 *   type a form cannot send and a cross-site script can send only after a CORS preflight that serve never
 *   grants. {@code DELETE} is preflighted by every browser whatever it carries, and forms cannot send it.</li>
 * </ul>
 * With tokens none of this applies: a browser cannot add the {@code Authorization} header for another site.
 *
 * <p>Before any route is matched, with or without tokens, a request naming another method in a header
 * ({@link #refuseMethodOverride}) is refused: its method is its request line's, the one every check here reads.
 */
final class AccessLayer {

    private static final String CALLER = "runbus.caller";

    private static final Set<String> LOOPBACK_NAMES = Set.of("localhost", "[::1]");
    private static final Set<String> SAME_SITE_FETCHES = Set.of("same-origin", "none");
    /**
     * Headers that ask a server to take another method than the request line's. Javalin takes the first as the
     * method it routes by (so a {@code GET} could reach a {@code POST} route), proxies and frameworks the others;
     * the API has no client that needs them, so a request carrying any is refused rather than read two ways.
     */
    private static final List<String> METHOD_OVERRIDES = List.of("X-HTTP-Method-Override", "X-HTTP-Method",
            "X-Method-Override");
    private static final Set<HandlerType> WITH_BODY = Set.of(HandlerType.POST, HandlerType.PUT, HandlerType.PATCH);

    private final List<Authenticator> authenticators;
    private final boolean open;
    /** Without tokens: the configured --host a Host header may name besides loopback; null: no Host check. */
    private final String configuredHost;
    /** --public-url: an origin (and host name) of this server besides the request's own; null: none. */
    private final PublicUrl publicUrl;

    /** @param authenticators tried in order; at least one */
    AccessLayer(List<Authenticator> authenticators) {
        this(authenticators, null, null);
    }

    private AccessLayer(List<Authenticator> authenticators, String configuredHost, PublicUrl publicUrl) {
        this.authenticators = List.copyOf(authenticators);
        this.open = authenticators.isEmpty();
        this.configuredHost = configuredHost == null ? null : hostName(configuredHost);
        this.publicUrl = publicUrl;
    }

    /**
     * No tokens: every request that passes the browser checks is let through.
     *
     * @param host      the configured {@code --host}, whose name a Host header may also give; null: no Host check
     *                  ({@code --insecure-no-auth})
     * @param publicUrl {@code --public-url}, whose host a Host header and whose origin an Origin header may also
     *                  name (a proxy on this machine that keeps the browser's Host); null: none
     */
    static AccessLayer withoutTokens(String host, PublicUrl publicUrl) {
        return new AccessLayer(List.of(), host == null ? null : host.contains(":") && !host.startsWith("[")
                ? "[" + host + "]" : host, publicUrl);
    }

    /** Refuses (400) a request that names another method in a header: run before any route is matched. */
    static void refuseMethodOverride(Context ctx) {
        for (String header : METHOD_OVERRIDES) {
            if (ctx.req().getHeader(header) != null) {
                throw ApiError.badRequest("header " + header + " is not accepted: send the request with the method"
                        + " it means", null);
            }
        }
    }

    void check(Context ctx) {
        if (open) {
            checkNotForAnotherSite(ctx);
        }
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

    private void checkNotForAnotherSite(Context ctx) {
        if (configuredHost != null) {
            String host = ctx.header("Host");
            String name = host == null ? "" : hostName(host);
            if (!LOOPBACK_NAMES.contains(name) && !name.equals(configuredHost) && !isLoopbackIpv4(name)
                    && !(publicUrl != null && name.equals(hostName(publicUrl.origin().replaceFirst("^https?://", ""))))) {
                throw new ApiError(403, "Host '" + (host == null ? "" : host) + "' is not a loopback address: without"
                        + " API tokens serve answers only requests for this machine (localhost, 127.0.0.1, [::1])",
                        null);
            }
        }
        if (fromAnotherSite(ctx, publicUrl)) {
            String origin = ctx.header("Origin");
            String fetchSite = ctx.header("Sec-Fetch-Site");
            throw new ApiError(403, "cross-site request refused: without API tokens serve answers pages of its own"
                    + " origin only (Origin " + (origin == null ? "-" : origin) + ", Sec-Fetch-Site "
                    + (fetchSite == null ? "-" : fetchSite) + ")", null);
        }
        if (WITH_BODY.contains(ctx.method())) {
            String type = ctx.contentType();
            if (type == null || !type.trim().toLowerCase(Locale.ROOT).startsWith("application/json")) {
                throw new ApiError(415, "Content-Type must be application/json: without API tokens serve takes"
                        + " state-changing requests only as JSON, which a form on another site cannot send", null);
            }
        }
    }

    /**
     * What a browser says of a request made for another site's page: an {@code Origin} other than the request's own
     * host (or {@code --public-url}'s origin, given one), or {@code Sec-Fetch-Site} other than {@code same-origin}
     * or {@code none}.
     */
    static boolean fromAnotherSite(Context ctx, PublicUrl publicUrl) {
        String origin = ctx.header("Origin");
        String fetchSite = ctx.header("Sec-Fetch-Site");
        return origin != null && !sameOrigin(origin, ctx.header("Host"))
                && !(publicUrl != null && publicUrl.isOrigin(origin))
                || fetchSite != null && !SAME_SITE_FETCHES.contains(fetchSite.trim().toLowerCase(Locale.ROOT));
    }

    /** An Origin naming the very host and port the request was sent to. */
    private static boolean sameOrigin(String origin, String host) {
        if (host == null) {
            return false;
        }
        try {
            URI uri = new URI(origin.trim());
            if (uri.getHost() == null || uri.getScheme() == null) {
                return false;
            }
            String authority = uri.getRawAuthority();
            return authority.equalsIgnoreCase(host.trim());
        } catch (URISyntaxException e) {
            return false;
        }
    }

    /** {@code localhost:8080} → {@code localhost}, {@code [::1]:8080} → {@code [::1]}, lower case. */
    private static String hostName(String host) {
        String h = host.trim().toLowerCase(Locale.ROOT);
        if (h.startsWith("[")) {
            int end = h.indexOf(']');
            return end < 0 ? h : h.substring(0, end + 1);
        }
        int colon = h.indexOf(':');
        return colon < 0 ? h : h.substring(0, colon);
    }

    /** 127.0.0.0/8 written as four decimal numbers: the whole loopback net, and nothing a DNS name can be. */
    private static boolean isLoopbackIpv4(String name) {
        String[] parts = name.split("\\.", -1);
        if (parts.length != 4 || !parts[0].equals("127")) {
            return false;
        }
        for (String p : parts) {
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(Character::isDigit) || Integer.parseInt(p) > 255) {
                return false;
            }
        }
        return true;
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
