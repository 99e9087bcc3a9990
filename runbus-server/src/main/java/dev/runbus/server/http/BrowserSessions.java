package dev.runbus.server.http;

import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The dashboard's sign-in: a person presents an API token once ({@link #signIn}) and gets a session cookie,
 * {@value #COOKIE}: random, {@code HttpOnly} (no script reads it), {@code SameSite=Strict} (no other site's page
 * sends it), {@code Secure} under TLS (serve's own, or a proxy's that {@code --public-url} names). The session acts
 * with the token's name and scopes, and ends after {@link #IDLE} without a request, {@link #LIFETIME} after the
 * sign-in however much it is used, at sign-out, or when serve stops (sessions live in memory only).
 *
 * <p>The door is open to anyone, so it is bounded: sign-in attempts per client address ({@code --sign-in-rate} a
 * minute, 429 past it), each refused one logged with the address (never what was presented); at most
 * {@link #MAX_PER_TOKEN} sessions per token (a token's oldest ends first), so that one token's holder signing in
 * again and again cannot push everyone else's sessions out; and {@link #MAX_SESSIONS} in all.
 *
 * <p>A request that changes state ({@code POST}, {@code PUT}, {@code PATCH}, {@code DELETE}) must also carry the
 * session's CSRF token in {@value #CSRF_HEADER}; without it the cookie is not taken as credentials at all, so the
 * request is refused as unauthenticated. Pages give their scripts that token; another site's page cannot read it.
 */
public final class BrowserSessions implements Authenticator {

    public static final String COOKIE = "runbus_session";
    public static final String CSRF_HEADER = "X-CSRF-Token";
    /** A session unused this long ends. */
    static final Duration IDLE = Duration.ofHours(8);
    /** A session ends this long after its sign-in, used or not: a stolen cookie is not good forever. */
    static final Duration LIFETIME = Duration.ofHours(24);
    /** Sessions held at once; the least recently used goes first beyond that. */
    static final int MAX_SESSIONS = 1_000;
    /** Sessions one token may hold at once; its least recently used goes first beyond that. */
    static final int MAX_PER_TOKEN = 20;

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(BrowserSessions.class);

    /** The request attribute naming the session a request was authenticated by. */
    private static final String SESSION = "runbus.session";
    private static final Set<HandlerType> SAFE = Set.of(HandlerType.GET, HandlerType.HEAD, HandlerType.OPTIONS);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A signed-in browser: who it acts as, the token its scripts must echo, and when it was last used. */
    public static final class Session {
        private final Caller caller;
        private final String csrf;
        private final long signedInNanos;
        private volatile long lastUsedNanos;

        private Session(Caller caller, String csrf, long now) {
            this.caller = caller;
            this.csrf = csrf;
            this.signedInNanos = now;
            this.lastUsedNanos = now;
        }

        public Caller caller() {
            return caller;
        }

        public String csrfToken() {
            return csrf;
        }
    }

    private final ApiTokens tokens;
    private final PublicUrl publicUrl;
    private final boolean secure;
    private final RateBuckets attempts;
    private final LongSupplier nanoTime;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();

    /**
     * @param publicUrl {@code --public-url}, whose origin a sign-in form may come from; null: none
     * @param secure    whether browsers reach serve over HTTPS (the cookie gets {@code Secure})
     * @param attempts  sign-in attempts allowed per client address
     */
    BrowserSessions(ApiTokens tokens, PublicUrl publicUrl, boolean secure, RateBuckets attempts,
                    LongSupplier nanoTime) {
        this.tokens = tokens;
        this.publicUrl = publicUrl;
        this.secure = secure;
        this.attempts = attempts;
        this.nanoTime = nanoTime;
    }

    /**
     * Signs in with an API token: on a match, a new session whose cookie is set on the response. The same answer
     * (empty) for an unknown token and a malformed one; either is logged with the client's address.
     *
     * @throws ApiError 429 when the address has made too many attempts of late
     */
    public Optional<Session> signIn(Context ctx, String presentedToken) {
        long wait = attempts.acquire(ctx.ip());
        if (wait > 0) {
            throw new ApiError(429, "too many sign-in attempts from this address: wait and try again", null,
                    RateBuckets.retryAfterSeconds(wait));
        }
        Optional<ApiToken> token = presentedToken == null ? Optional.empty() : tokens.match(presentedToken.trim());
        if (token.isEmpty()) {
            log.warn("dashboard sign-in refused from {}: no API token matches what was presented", ctx.ip());
            return Optional.empty();
        }
        Caller caller = Caller.token(token.get().name(), token.get().scopes());
        String id = open(caller);
        ctx.header("Set-Cookie", cookie(id, (int) LIFETIME.toSeconds()));
        log.info("dashboard sign-in as token '{}' from {}", caller.name(), ctx.ip());
        return Optional.of(sessions.get(id));
    }

    /**
     * A new session acting as {@code caller}, within the caps ({@link #MAX_PER_TOKEN}, {@link #MAX_SESSIONS}): the
     * id its cookie carries.
     */
    String open(Caller caller) {
        String id = random();
        Session s = new Session(caller, random(), nanoTime.getAsLong());
        synchronized (sessions) {
            evict(caller.name(), MAX_PER_TOKEN);
            evict(null, MAX_SESSIONS);
            sessions.put(id, s);
        }
        return id;
    }

    /**
     * Whether a sign-in came from another site's page (the same browser signals the access layer reads without
     * tokens): such a form must not sign the browser in, not even with a valid token.
     */
    public boolean fromAnotherSite(Context ctx) {
        return AccessLayer.fromAnotherSite(ctx, publicUrl);
    }

    /**
     * Ends the request's session and tells the browser to forget the cookie, when {@code presentedCsrf} is the
     * session's CSRF token (so another site cannot sign a person out); false, and nothing changed, otherwise.
     */
    public boolean signOut(Context ctx, String presentedCsrf) {
        String id = ctx.cookie(COOKIE);
        Session s = id == null ? null : sessions.get(id);
        if (s == null || !sameToken(s.csrf, presentedCsrf)) {
            return false;
        }
        sessions.remove(id, s);
        ctx.header("Set-Cookie", cookie("", 0));
        return true;
    }

    /** The request's live session, refreshed; empty without a cookie, or for an ended or unknown one. */
    public Optional<Session> current(Context ctx) {
        String id = ctx.cookie(COOKIE);
        return id == null ? Optional.empty() : lookup(id);
    }

    /** The live session {@code id}, refreshed; empty for an ended or unknown one (an expired one ends now). */
    Optional<Session> lookup(String id) {
        Session s = sessions.get(id);
        long now = nanoTime.getAsLong();
        if (s == null) {
            return Optional.empty();
        }
        if (now - s.lastUsedNanos > IDLE.toNanos() || now - s.signedInNanos > LIFETIME.toNanos()) {
            sessions.remove(id, s);
            return Optional.empty();
        }
        s.lastUsedNanos = now;
        return Optional.of(s);
    }

    @Override
    public Optional<Caller> authenticate(Context ctx) {
        Optional<Session> s = current(ctx);
        if (s.isEmpty()) {
            return Optional.empty();
        }
        if (!SAFE.contains(ctx.method()) && !sameToken(s.get().csrf, ctx.header(CSRF_HEADER))) {
            return Optional.empty();
        }
        ctx.attribute(SESSION, ctx.cookie(COOKIE));
        return Optional.of(s.get().caller);
    }

    /**
     * Whether the credentials of {@code ctx} still hold, for a request that outlives its answer's start (an event
     * stream): the session it was authenticated by is still live; always true for a request authenticated
     * otherwise (a bearer token).
     */
    java.util.function.BooleanSupplier stillSignedIn(Context ctx) {
        String id = ctx.attribute(SESSION);
        return id == null ? () -> true : () -> isLive(id);
    }

    /** Session {@code id} has not ended (signed out, evicted, expired), without counting this as a use. */
    boolean isLive(String id) {
        Session s = sessions.get(id);
        long now = nanoTime.getAsLong();
        return s != null && now - s.lastUsedNanos <= IDLE.toNanos() && now - s.signedInNanos <= LIFETIME.toNanos();
    }

    int size() {
        return sessions.size();
    }

    /** Sessions of {@code tokenName} (null: of all tokens) now held. */
    int size(String tokenName) {
        return (int) sessions.values().stream().filter(s -> s.caller.name().equals(tokenName)).count();
    }

    /**
     * Ends the least recently used sessions of {@code tokenName} (null: of any token) until fewer than {@code max}
     * are left, room for one more. Called under the map's lock, so two sign-ins cannot both take the last place.
     */
    private void evict(String tokenName, int max) {
        while (true) {
            var held = sessions.entrySet().stream()
                    .filter(e -> tokenName == null || e.getValue().caller.name().equals(tokenName)).toList();
            if (held.size() < max) {
                return;
            }
            Map.Entry<String, Session> oldest = held.stream()
                    .min(Comparator.comparingLong(e -> e.getValue().lastUsedNanos)).orElseThrow();
            sessions.remove(oldest.getKey(), oldest.getValue());
        }
    }

    private String cookie(String value, int maxAgeSeconds) {
        return COOKIE + "=" + value + "; Path=/; Max-Age=" + maxAgeSeconds + "; HttpOnly; SameSite=Strict"
                + (secure ? "; Secure" : "");
    }

    private static boolean sameToken(String expected, String presented) {
        return presented != null && MessageDigest.isEqual(expected.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                presented.trim().getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private static String random() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }
}
