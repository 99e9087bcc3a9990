package dev.runbus.server.web;

import dev.runbus.Bus;
import dev.runbus.Inspector;
import dev.runbus.server.http.BrowserSessions;
import dev.runbus.server.http.Caller;
import dev.runbus.server.http.HttpApi;
import dev.runbus.server.http.Scope;
import io.javalin.http.Context;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What every page shares: the navigation, the red banner while any dead-letter stream holds entries, who is
 * signed in, the CSRF token the page's scripts send with an action, and whether the caller may act at all
 * ({@code admin}). Renders a page with the headers that keep it from being framed or fed foreign scripts.
 */
final class Layout {

    /** Topics the banner and the overview read at most; a deployment with more sees the first ones by name. */
    static final int MAX_TOPICS = 100;

    private final Bus bus;
    private final Templates templates;
    private final BrowserSessions sessions;

    Layout(Bus bus, Templates templates, BrowserSessions sessions) {
        this.bus = bus;
        this.templates = templates;
        this.sessions = sessions;
    }

    /** The topics, by name, at most {@link #MAX_TOPICS}. */
    List<Inspector.StreamInfo> topics() {
        return bus.inspector().streams(null, MAX_TOPICS);
    }

    /** A model for {@code page} with the shared parts filled in, from the topics the page read already. */
    Map<String, Object> model(Context ctx, String page, String title, List<Inspector.StreamInfo> topics) {
        Caller caller = HttpApi.caller(ctx);
        Map<String, Object> m = new HashMap<>();
        m.put("title", title);
        m.put("nav_" + page, true);
        m.put("can_admin", caller.may(Scope.ADMIN));
        long dead = 0;
        String firstDead = null;
        for (Inspector.StreamInfo t : topics) {
            dead += t.deadLetters();
            if (firstDead == null && t.deadLetters() > 0) {
                firstDead = t.topic();
            }
        }
        if (dead > 0) {
            m.put("banner", Map.of("count", dead, "topic_q", Links.encode(firstDead), "plural", dead != 1));
        }
        if (sessions != null) {
            sessions.current(ctx).ifPresent(s -> {
                m.put("signed_in_as", s.caller().name());
                m.put("csrf", s.csrfToken());
            });
        }
        return m;
    }

    /** The page as HTML, with headers that allow only the dashboard's own scripts and styles, and no framing. */
    void render(Context ctx, String template, Map<String, Object> model) {
        ctx.header("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self';"
                + " img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'");
        ctx.header("X-Frame-Options", "DENY");
        ctx.header("Referrer-Policy", "same-origin");
        ctx.header("Cache-Control", "no-store");
        ctx.contentType("text/html; charset=utf-8").result(templates.render(template, model));
    }
}
