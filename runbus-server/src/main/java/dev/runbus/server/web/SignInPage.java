package dev.runbus.server.web;

import dev.runbus.server.http.BrowserSessions;
import dev.runbus.server.http.RequestBody;
import io.javalin.http.Context;
import java.util.HashMap;
import java.util.Map;

/**
 * {@code /login}: a person pastes an API token once and gets a session cookie ({@link BrowserSessions}); the page
 * returns to where the person was sent from ({@code next}, a path of this server only). {@code POST /logout} ends
 * the session; it needs the session's CSRF token, so another site cannot sign a person out either.
 *
 * <p>Both take only a URL-encoded form (415 for anything else, a multipart body included, before any of it is read)
 * and read it through {@link RequestBody}, bounded by {@code --max-body} and {@code --request-timeout} like every
 * other body: the door is open to anyone, so it must cost no more than a door.
 */
final class SignInPage {

    private final BrowserSessions sessions;
    private final Templates templates;
    private final RequestBody body;

    SignInPage(BrowserSessions sessions, Templates templates, RequestBody body) {
        this.sessions = sessions;
        this.templates = templates;
        this.body = body;
    }

    void form(Context ctx) {
        show(ctx, 200, ctx.queryParam("next"), null);
    }

    void signIn(Context ctx) {
        Map<String, String> form = body.form(ctx);
        String next = form.get("next");
        if (sessions.fromAnotherSite(ctx)) {
            show(ctx, 403, next, "This sign-in came from another site's page.");
            return;
        }
        if (sessions.signIn(ctx, form.get("token")).isEmpty()) {
            show(ctx, 401, next, "That token is not valid.");
            return;
        }
        ctx.status(303).header("Location", localPath(next)).result("");
    }

    void signOut(Context ctx) {
        sessions.signOut(ctx, body.form(ctx).get("csrf"));
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
