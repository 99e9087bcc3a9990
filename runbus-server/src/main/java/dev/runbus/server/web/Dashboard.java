package dev.runbus.server.web;

import dev.runbus.Bus;
import dev.runbus.runs.Runs;
import dev.runbus.server.Metrics;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import dev.runbus.server.http.BrowserSessions;
import dev.runbus.server.http.Scope;
import io.javalin.Javalin;

/**
 * The web dashboard {@code runbus serve} shows at {@code /} (docs/dashboard.md): pages rendered on the server from
 * the bus's inspector and the runs layer, behind the API's access layer. Every page needs the {@code read} scope;
 * what a page lets a person do (replay, purge, cancel) it does by calling the API's own routes from the browser,
 * which need {@code admin}, so the dashboard adds no way to change anything that the API does not already guard.
 * With API tokens a person signs in once with a token ({@link SignInPage}) and the browser then holds a session
 * cookie; without tokens the pages follow the API's rules without tokens (loopback, same origin).
 */
public final class Dashboard implements AutoCloseable {

    private final RateHistory rates;
    private final OverviewPage overview;
    private final TopicPage topic;
    private final DeadLetterPage deadLetters;
    private final ScheduledPage scheduled;
    private final RunPages runPages;
    private final SignInPage signIn;

    /**
     * @param sessions the sign-in sessions of a server with tokens; null without tokens (no sign-in page)
     */
    public Dashboard(Bus bus, Runs runs, Metrics metrics, Settings settings, BrowserSessions sessions) {
        Templates templates = new Templates();
        String runsTopic = settings.get(Setting.TOPIC);
        Layout layout = new Layout(bus, templates, sessions);
        this.rates = new RateHistory(metrics.registry());
        this.overview = new OverviewPage(bus, runs, layout, rates);
        this.topic = new TopicPage(bus, layout);
        this.deadLetters = new DeadLetterPage(bus, layout, runsTopic);
        this.scheduled = new ScheduledPage(bus, layout, runsTopic);
        this.runPages = new RunPages(runs, layout);
        this.signIn = sessions == null ? null : new SignInPage(sessions, templates,
                dev.runbus.server.http.RequestBody.of(settings));
    }

    /** Registers the pages on {@code app} and starts sampling the overview's rates. */
    public void register(Javalin app) {
        app.get("/", overview::show, Scope.READ);
        app.get("/dashboard/rates", overview::rates, Scope.READ);
        app.get("/topics/{topic}", topic::show, Scope.READ);
        app.get("/dead-letters", deadLetters::show, Scope.READ);
        app.get("/scheduled", scheduled::show, Scope.READ);
        app.get("/runs", runPages::list, Scope.READ);
        app.get("/runs/{id}", runPages::show, Scope.READ);
        app.get("/assets/{file}", Assets::serve);
        if (signIn != null) {
            app.get("/login", signIn::form);
            app.post("/login", signIn::signIn);
            app.post("/logout", signIn::signOut);
        }
        rates.start();
    }

    @Override
    public void close() {
        rates.close();
    }
}
