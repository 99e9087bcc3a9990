package dev.runbus.server.web;

import dev.runbus.server.http.BrowserSessions;
import io.javalin.http.Context;
import java.util.HashMap;
import java.util.Map;

/**
 * {@code /login}: a person pastes an API token once and gets a session cookie ({@link BrowserSessions}); the page
 * returns to where the person was sent from ({@code next}, a path of this server only). {@code POST /logout} ends
 * the session; it needs the session's CSRF token, so another site cannot sign a person out either.
 */
final class SignInPage {

    private final BrowserSessions sessions;
    private final Templates templates;

    SignInPage(BrowserSessions sessions, Templates templates) {
        this.sessions = sessions;
        this.templates = templates;
    }

    void form(Context ctx) {
        show(ctx, 200, ctx.queryParam("next"), null);
    }

    void signIn(Context ctx) {
        String next = ctx.formParam("next");
        if (BrowserSessions.fromAnotherSite(ctx)) {
            show(ctx, 403, next, "This sign-in came from another site's page.");
            return;
        }
        if (sessions.signIn(ctx, ctx.formParam("token")).isEmpty()) {
            show(ctx, 401, next, "That token is not valid.");
            return;
        }
        ctx.status(303).header("Location", localPath(next)).result("");
    }

    void signOut(Context ctx) {
        sessions.signOut(ctx, ctx.formParam("csrf"));
        ctx.status(303).header("Location", "/login").result("");
    }

    private void show(Context ctx, int status, String next, String error) {
        Map<String, Object> m = new HashMap<>();
        m.put("next", localPath(next));
        m.put("error", error);
        ctx.header("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'");
        ctx.header("X-Frame-Options", "DENY");
        ctx.status(status).contentType("text/html; charset=utf-8").result(templates.render("login", m));
    }

    /** Only a path on this server: {@code /runs?status=failed}, never {@code //evil.example} or a URL. */
    static String localPath(String next) {
        if (next == null || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")
                || next.chars().anyMatch(c -> c < 0x20)) {
            return "/";
        }
        return next;
    }
}
