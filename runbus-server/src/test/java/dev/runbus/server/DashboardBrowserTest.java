package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.Message;
import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import dev.runbus.testkit.Wait;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;

/**
 * The dashboard in a real browser (headless Chromium) on a real serve, Redis and PostgreSQL: sign in with a token,
 * see the counts and the rate chart's last ten minutes, a dead letter's reason, replay it through the page and watch
 * its run complete, cancel a scheduled run, a read-only token that cannot replay, and a run's page following the run
 * live, a pending one included. Screenshots go to {@code target/screenshots}.
 * The tests run in order: each builds on what the one before left (the dead letter, then its replay).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardBrowserTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    static final String ADMIN = ApiTokens.generate(new SecureRandom());
    static final String READER = ApiTokens.generate(new SecureRandom());

    static TestServe serve;
    static Browser browser;
    static String gatedRun;

    @BeforeAll
    static void start() throws Exception {
        GatedHandler.OPEN.set(false);
        serve = TestServe.start(Map.of(Setting.HANDLER, GatedHandler.class.getName(),
                Setting.RETRY, "exponential:100ms,2,200ms,0",
                // The test polls run statuses every 10 ms with the token the pages use: no read-rate limit for it.
                Setting.READ_RATE, "0",
                Setting.API_TOKENS, String.join(";",
                        new ApiToken("operator", Set.of(Scope.SUBMIT, Scope.READ, Scope.ADMIN), ApiTokens.sha256(ADMIN)).line(),
                        new ApiToken("viewer", Set.of(Scope.READ), ApiTokens.sha256(READER)).line())));
        for (int i = 1; i <= 3; i++) {
            submit("{\"session_id\":\"s1\",\"user_id\":\"ada\",\"input\":\"hello " + i + "\"}");
        }
        gatedRun = submit("{\"session_id\":\"s1\",\"user_id\":\"bob\",\"input\":\"gated order 42\"}");
        // Messages of a plain topic beside the runs, published by the server's own bus.
        for (int i = 0; i < 5; i++) {
            serve.server.infrastructure().bus().publisher().publish("orders",
                    Message.of("order.placed", ("{\"order\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
        }
        Wait.until("the gated run failed", WAIT, () -> "failed".equals(status(gatedRun)));
        Wait.until("the other runs done", WAIT, () -> doneRuns() == 3);
        browser = Browser.start();
    }

    @AfterAll
    static void stop() {
        try {
            if (browser != null) {
                browser.close();
            }
        } finally {
            GatedHandler.OPEN.set(false);
            serve.close();
        }
    }

    @Test
    @Order(1)
    void aPageAsksForSignInAndAWrongTokenIsRefused() {
        WebDriver d = browser.driver;
        d.get(serve.base() + "/dead-letters");
        assertThat(d.getCurrentUrl()).contains("/login?next=");
        d.findElement(By.id("token")).sendKeys("rbt_not-a-token");
        d.findElement(By.cssSelector("#login button")).click();
        // The click returns once the form is sent: wait for the page its answer loads.
        Wait.until("the sign-in page's error", WAIT, () -> !d.findElements(By.id("login-error")).isEmpty());
        assertThat(d.findElement(By.id("login-error")).getText()).contains("not valid");
    }

    @Test
    @Order(2)
    void theOverviewShowsTheCountsAndTheDeadLetterBanner() throws Exception {
        WebDriver d = browser.driver;
        signIn(d, ADMIN, "/");
        assertThat(d.findElement(By.id("signed-in-as")).getText()).isEqualTo("operator");
        assertThat(d.findElement(By.id("dead-letter-banner")).getText()).contains("1 dead letter waiting");
        WebElement runsRow = d.findElement(By.cssSelector("#topics tr[data-topic='runs']"));
        assertThat(runsRow.findElement(By.cssSelector("td.dead")).getText()).isEqualTo("1");
        WebElement ordersRow = d.findElement(By.cssSelector("#topics tr[data-topic='orders']"));
        assertThat(ordersRow.findElements(By.tagName("td")).get(2).getText()).isEqualTo("5");
        assertThat(d.findElement(By.cssSelector("#runs-by-status a[data-status='done']")).getText()).isEqualTo("3");
        assertThat(d.findElement(By.cssSelector("#runs-by-status a[data-status='failed']")).getText()).isEqualTo("1");
        assertThat(d.findElement(By.id("total-dead-letters")).getText()).isEqualTo("1");
        // the chart draws once the rates have a sample or two
        Wait.until("the rate chart drawn", WAIT, () -> !d.findElements(By.cssSelector("#rates-chart canvas")).isEmpty());
        assertTheTimeAxisSpansTenMinutes(d);
        browser.screenshot("overview");

        d.findElement(By.linkText("runs")).click();
        Wait.until("the topic's page", WAIT, () -> !d.findElements(By.id("topic-name")).isEmpty());
        assertThat(d.findElement(By.id("topic-name")).getText()).isEqualTo("runs");
        assertThat(d.findElement(By.cssSelector(".group[data-group='run-workers'] .consumers")).getText())
                .contains("yes");
        browser.screenshot("topic");
    }

    @Test
    @Order(3)
    void theDeadLetterShowsItsReasonAndAReplayThroughThePageCompletesTheRun() throws Exception {
        WebDriver d = browser.driver;
        d.get(serve.base() + "/dead-letters?topic=runs");
        List<WebElement> rows = d.findElements(By.cssSelector("tr.dead-letter"));
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0).findElement(By.cssSelector("td.reason")).getText())
                .contains("the gate is shut for gated order 42");
        assertThat(d.findElement(By.id("dead-letter-count")).getText()).isEqualTo("1");
        browser.screenshot("dead-letters");

        GatedHandler.OPEN.set(true);
        rows.get(0).findElement(By.cssSelector("button.replay")).click();
        d.switchTo().alert().accept();
        Wait.until("the replayed run done", WAIT, () -> "done".equals(status(gatedRun)));
        // The page reloads 400 ms after the replay's call returns: wait for that reload (the row says what it was
        // replayed as), or it lands after the navigation below and leaves the browser here (seen on a busy host).
        Wait.until("the page after the replay", WAIT, () -> !d.findElements(By.cssSelector("span.replayed")).isEmpty());

        d.get(serve.base() + "/runs/" + gatedRun);
        assertThat(d.findElement(By.id("run-status")).getText()).isEqualTo("done");
        assertThat(d.findElement(By.id("replies")).getText()).contains("handled gated order 42");
        browser.screenshot("run");
    }

    @Test
    @Order(4)
    void theRunsPageFiltersByStatusAndUser() {
        WebDriver d = browser.driver;
        d.get(serve.base() + "/runs?status=done&user=ada");
        List<WebElement> rows = d.findElements(By.cssSelector("#runs tr.run"));
        assertThat(rows).hasSize(3);
        assertThat(rows).allSatisfy(r -> assertThat(r.findElement(By.cssSelector("td.status")).getText())
                .isEqualTo("done"));
        d.get(serve.base() + "/runs?user=nobody&status=");
        assertThat(d.findElements(By.cssSelector("#runs tr.run"))).isEmpty();
    }

    @Test
    @Order(5)
    void aScheduledRunIsCancelledFromThePage() throws Exception {
        String later = submit("{\"session_id\":\"s2\",\"user_id\":\"cy\",\"input\":\"later\",\"delay\":\"PT1H\"}");
        WebDriver d = browser.driver;
        d.get(serve.base() + "/scheduled?topic=runs");
        WebElement row = d.findElement(By.xpath("//tr[contains(@class,'scheduled-entry')][.//a[@href='/runs/" + later
                + "']]"));
        row.findElement(By.cssSelector("button.cancel")).click();
        d.switchTo().alert().accept();
        Wait.until("the run cancelled", WAIT, () -> "cancelled".equals(status(later)));
        Wait.until("the entry gone from the page", WAIT, () -> {
            d.navigate().refresh();
            return d.findElements(By.xpath("//a[@href='/runs/" + later + "']")).isEmpty();
        });
        assertThat(serve.server.infrastructure().bus().scheduled().count("runs")).isZero();
    }

    @Test
    @Order(6)
    void aReadOnlyTokenSeesButCannotReplay() throws Exception {
        WebDriver d = browser.driver;
        signOut(d);
        String dead = makeDeadLetter("gated again");
        signIn(d, READER, "/dead-letters?topic=runs");
        assertThat(d.findElement(By.id("signed-in-as")).getText()).isEqualTo("viewer");
        assertThat(d.findElements(By.cssSelector("tr.dead-letter"))).isNotEmpty();
        assertThat(d.findElements(By.cssSelector("button.replay"))).isEmpty();
        assertThat(d.findElements(By.cssSelector("button.purge"))).isEmpty();
        // The page's own script, called by hand with the session's CSRF token: the API refuses the scope.
        Object status = ((JavascriptExecutor) d).executeAsyncScript(
                "var done = arguments[arguments.length - 1];"
                + "fetch('/v1/dead-letters/" + dead + "/replay?topic=runs', {method: 'POST', headers: {"
                + "'Content-Type': 'application/json', 'X-CSRF-Token':"
                + " document.querySelector('meta[name=csrf-token]').content}, body: '{}'}).then(r => done(r.status));");
        assertThat(((Number) status).intValue()).isEqualTo(403);
        assertThat(serve.server.infrastructure().bus().deadLetters().get("runs", dead).orElseThrow().replayedAs())
                .isEmpty();
    }

    @Test
    @Order(7)
    void aSelectionIsReplayedAtOnce_andAPurgeFromThePageDeletesTheDeadLetter() throws Exception {
        WebDriver d = browser.driver;
        signOut(d); // the reader
        List<String> runs = List.of(runOf(makeDeadLetter("gated bulk 1")), runOf(makeDeadLetter("gated bulk 2")));
        signIn(d, ADMIN, "/dead-letters?topic=runs");
        int selectable = d.findElements(By.cssSelector("input.select")).size();
        assertThat(selectable).as("the two new dead letters and the reader's, not the one replayed before")
                .isEqualTo(3);
        GatedHandler.OPEN.set(true);
        d.findElement(By.id("select-all")).click();
        d.findElement(By.id("replay-selected")).click();
        d.switchTo().alert().accept();
        for (String run : runs) {
            Wait.until("run " + run + " done", WAIT, () -> "done".equals(status(run)));
        }
        d.get(serve.base() + "/dead-letters?topic=runs");
        assertThat(d.findElements(By.cssSelector("input.select"))).as("every dead letter replayed").isEmpty();

        String purged = makeDeadLetter("gated purge");
        String purgedRun = runOf(purged);
        d.get(serve.base() + "/dead-letters?topic=runs");
        d.findElement(By.cssSelector("tr.dead-letter[data-id='" + purged + "'] button.purge")).click();
        d.switchTo().alert().accept();
        Wait.until("the dead letter purged", WAIT,
                () -> serve.server.infrastructure().bus().deadLetters().get("runs", purged).isEmpty());
        assertThat(status(purgedRun)).isEqualTo("failed");
        // The page the purge leads to has loaded (its row is gone): a navigation still on its way would land after the
        // next test's, which then found this page instead of its own (seen on a busy host).
        Wait.until("the page after the purge", WAIT, () -> d.findElements(
                By.cssSelector("tr.dead-letter[data-id='" + purged + "']")).isEmpty());
    }

    @Test
    @Order(8)
    void aRunsPageFollowsTheRunLive() throws Exception {
        GatedHandler.OPEN.set(true);
        String soon = submit("{\"session_id\":\"s4\",\"user_id\":\"eve\",\"input\":\"soon\",\"delay\":\"PT5S\"}");
        WebDriver d = browser.driver;
        d.get(serve.base() + "/runs/" + soon);
        assertThat(d.findElement(By.id("run-status")).getText()).isEqualTo("pending");
        Wait.until("the page following the run", WAIT, () -> d.findElement(By.id("live")).isDisplayed());
        // No navigation by the test: the page updates itself from the run's event stream.
        Wait.until("the page shows the run done", WAIT,
                () -> d.findElement(By.id("run-status")).getText().equals("done")
                        && d.findElement(By.id("replies")).getText().contains("handled soon"));
        // The stream's end reloads the page 300 ms later: wait for that reload, or it could land after the next
        // case's navigation and leave the browser on this run.
        Wait.until("the page reloaded after the stream's end", WAIT, () -> "reload".equals(
                ((org.openqa.selenium.JavascriptExecutor) d).executeScript(
                        "return performance.getEntriesByType('navigation')[0].type")));
    }

    @Test
    @Order(9)
    void aPendingRunsPageIsLiveBeforeTheRunIsDue() throws Exception {
        String later = submit("{\"session_id\":\"s5\",\"user_id\":\"fay\",\"input\":\"much later\",\"delay\":\"PT1H\"}");
        WebDriver d = browser.driver;
        d.get(serve.base() + "/runs/" + later);
        // "live" shows once the run's event stream has delivered its first event (the run's status); the run is due
        // in an hour, so that event must come on its own, not with the run's end.
        Wait.until("the page receiving the pending run's events", WAIT, () -> d.findElement(By.id("live")).isDisplayed());
        assertThat(status(later)).isEqualTo("pending");
        // A cancel made elsewhere reaches the page through the stream.
        HttpResponse<String> cancelled = serve.send(serve.request("/v1/runs/" + later + "/cancel")
                .header("Authorization", "Bearer " + ADMIN).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{}")));
        assertThat(cancelled.statusCode()).as(cancelled.body()).isEqualTo(200);
        Wait.until("the page shows the run cancelled", WAIT,
                () -> d.findElement(By.id("run-status")).getText().equals("cancelled"));
    }

    /**
     * The overview's rate chart labels its time axis with the last ten minutes, however few samples there are a few
     * seconds after the start (a lone sample once spanned 1000 days, labelled by month from 2027 to 2029; two, five
     * seconds). The labels are those uPlot drew on its canvas, from its axis ({@code _values}, uPlot 1.6).
     */
    @SuppressWarnings("unchecked")
    private static void assertTheTimeAxisSpansTenMinutes(WebDriver d) {
        Map<String, Object> axis = Wait.until("the chart's time axis labelled", WAIT,
                () -> (Map<String, Object>) ((JavascriptExecutor) d).executeScript(
                        "var u = document.getElementById('rates-chart').uplot;"
                                + " return u && u.axes[0]._values ? {min: u.scales.x.min, max: u.scales.x.max,"
                                + " labels: u.axes[0]._values} : null;"),
                a -> a != null);
        double from = ((Number) axis.get("min")).doubleValue();
        double to = ((Number) axis.get("max")).doubleValue();
        assertThat(to - from).as("the axis's span in seconds, " + axis).isEqualTo(600.0);
        List<String> labels = (List<String>) axis.get("labels");
        assertThat(labels).as("times of day, a minute apart").isNotEmpty()
                .allSatisfy(l -> assertThat(l.split("\n")[0]).matches("\\d{1,2}:\\d{2}(am|pm)"));
    }

    /** The run a dead letter of the runs topic belongs to. */
    private static String runOf(String deadLetter) {
        return dev.runbus.runs.Runs.runIdOf(serve.server.infrastructure().bus().deadLetters().get("runs", deadLetter)
                .orElseThrow().message()).orElseThrow().toString();
    }

    /** Submits a run through the API; returns its id. */
    private static String submit(String body) throws Exception {
        HttpResponse<String> r = serve.send(serve.request("/v1/runs").header("Authorization", "Bearer " + ADMIN)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)));
        assertThat(r.statusCode()).as(r.body()).isIn(201, 202);
        return TestServe.json(r).get("run_id").asText();
    }

    private static String status(String runId) {
        try {
            JsonNode run = TestServe.json(serve.get("/v1/runs/" + runId, ADMIN));
            return run.get("status").asText();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static long doneRuns() {
        try {
            return TestServe.json(serve.get("/v1/runs?status=done", ADMIN)).get("runs").size();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A run that fails into a dead letter with the gate shut; returns the dead letter's id. */
    private static String makeDeadLetter(String input) throws Exception {
        GatedHandler.OPEN.set(false);
        String id = submit("{\"session_id\":\"s3\",\"user_id\":\"dee\",\"input\":\"" + input + "\"}");
        Wait.until("run " + id + " failed", WAIT, () -> "failed".equals(status(id)));
        return TestServe.json(serve.get("/v1/runs/" + id, ADMIN)).get("dead_letter_id").asText();
    }

    /** Signs out from the overview's header and waits for the sign-in page. */
    private static void signOut(WebDriver d) {
        d.get(serve.base() + "/");
        d.findElement(By.cssSelector("header .who button")).click();
        // The click returns once the form's POST is sent, not when its redirect has loaded.
        Wait.until("signed out, on the sign-in page", WAIT, () -> d.getCurrentUrl().contains("/login"));
    }

    private static void signIn(WebDriver d, String token, String path) {
        d.get(serve.base() + path);
        assertThat(d.getCurrentUrl()).contains("/login");
        d.findElement(By.id("token")).sendKeys(token);
        d.findElement(By.cssSelector("#login button")).click();
        Wait.until("signed in", WAIT, () -> !d.getCurrentUrl().contains("/login"));
    }
}
