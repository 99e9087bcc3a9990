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
 * sends it), {@code Secure} under TLS. The session acts with the token's name and scopes, and ends after
 * {@link #IDLE} without a request, at sign-out, or when serve stops (sessions live in memory only).
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
    /** Sessions held at once; the least recently used goes first beyond that. */
    static final int MAX_SESSIONS = 1_000;

    private static final Set<HandlerType> SAFE = Set.of(HandlerType.GET, HandlerType.HEAD, HandlerType.OPTIONS);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A signed-in browser: who it acts as, the token its scripts must echo, and when it was last used. */
    public static final class Session {
        private final Caller caller;
        private final String csrf;
        private volatile long lastUsedNanos;

        private Session(Caller caller, String csrf, long now) {
            this.caller = caller;
            this.csrf = csrf;
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
    private final boolean secure;
    private final LongSupplier nanoTime;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();

    BrowserSessions(ApiTokens tokens, boolean secure, LongSupplier nanoTime) {
        this.tokens = tokens;
        this.secure = secure;
        this.nanoTime = nanoTime;
    }

    /**
     * Signs in with an API token: on a match, a new session whose cookie is set on the response. The same answer
     * (empty) for an unknown token and a malformed one.
     */
    public Optional<Session> signIn(Context ctx, String presentedToken) {
        if (presentedToken == null) {
            return Optional.empty();
        }
        return tokens.match(presentedToken.trim()).map(t -> {
            Caller caller = Caller.token(t.name(), t.scopes());
            String id = random();
            Session s = new Session(caller, random(), nanoTime.getAsLong());
            evictBeyondLimit();
            sessions.put(id, s);
            ctx.header("Set-Cookie", cookie(id, (int) IDLE.toSeconds()));
            return s;
        });
    }

    /**
     * Whether a sign-in came from another site's page (the same browser signals the access layer reads without
     * tokens): such a form must not sign the browser in, not even with a valid token.
     */
    public static boolean fromAnotherSite(Context ctx) {
        return AccessLayer.fromAnotherSite(ctx);
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
        if (id == null) {
            return Optional.empty();
        }
        Session s = sessions.get(id);
        long now = nanoTime.getAsLong();
        if (s == null) {
            return Optional.empty();
        }
        if (now - s.lastUsedNanos > IDLE.toNanos()) {
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
        return Optional.of(s.get().caller);
    }

    int size() {
        return sessions.size();
    }

    private void evictBeyondLimit() {
        while (sessions.size() >= MAX_SESSIONS) {
            Map.Entry<String, Session> oldest = sessions.entrySet().stream()
                    .min(Comparator.comparingLong(e -> e.getValue().lastUsedNanos)).orElse(null);
            if (oldest == null) {
                return;
            }
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
