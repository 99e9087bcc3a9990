package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.RedisTarget;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every dashboard page on 100,000 runs and 10,000 dead letters (docs/dashboard.md reports the figures): each page is
 * fetched 5 times to warm up, then 20 times, and the median and the slowest are printed, as a client on loopback
 * sees them (server time plus a loopback round trip). The test asserts what each page shows, not how fast: speed is
 * reported, not asserted. {@code -Drunbus.dashboard.runs=N} and {@code -Drunbus.dashboard.dead=N} change the sizes.
 */
class DashboardTimingsTest {

    static final int RUNS = Integer.getInteger("runbus.dashboard.runs", 100_000);
    static final int DEAD_LETTERS = Integer.getInteger("runbus.dashboard.dead", 10_000);
    static TestServe serve;
    static String someRun;

    @BeforeAll
    static void seed() throws Exception {
        // No read rate: 175 page loads in a row, which the default 100 reads/s refuses (429) when the pages are quick.
        serve = TestServe.start(Map.of(Setting.READ_RATE, "0"));
        long t = System.nanoTime();
        try (Connection c = DriverManager.getConnection(DemoEndToEndTest.DATABASE)) {
            c.createStatement().execute("INSERT INTO " + serve.schema + ".runs (id, idempotency_key, input_hash,"
                    + " session_id, user_id, input, status, attempts, created_at, updated_at) SELECT gen_random_uuid(),"
                    + " 'timing-' || i, 'h', 's' || (i % 5000), 'u' || (i % 1000), 'input ' || i,"
                    + " CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'done' END, 1,"
                    + " timestamptz '2026-01-01' + i * interval '1 second', now() FROM generate_series(1, " + RUNS + ") i");
            c.createStatement().execute("ANALYZE " + serve.schema + ".runs");
            try (ResultSet rs = c.createStatement().executeQuery("SELECT id FROM " + serve.schema
                    + ".runs ORDER BY created_at DESC LIMIT 1")) {
                rs.next();
                someRun = rs.getString(1);
            }
        }
        String dead = serve.prefix + ":{runs}:dead";
        RedisClient client = RedisClient.create(RedisTarget.local().uri());
        try (StatefulRedisConnection<String, String> conn = client.connect()) {
            RedisAsyncCommands<String, String> async = conn.async();
            List<RedisFuture<String>> sent = new ArrayList<>(DEAD_LETTERS);
            for (int i = 0; i < DEAD_LETTERS; i++) {
                Map<String, String> fields = new LinkedHashMap<>();
                fields.put("dl:topic", "runs");
                fields.put("dl:stream_id", "1700000000000-" + i);
                fields.put("dl:group", "run-workers");
                fields.put("dl:consumer", "worker-1");
                fields.put("dl:deliveries", "3");
                fields.put("dl:reason", "java.lang.IllegalStateException: order " + i + " cannot be billed");
                fields.put("dl:at", Long.toString(System.currentTimeMillis()));
                fields.put("id", "order-" + i);
                fields.put("type", "order.placed");
                fields.put("payload", "{\"order\":" + i + "}");
                sent.add(async.xadd(dead, fields));
            }
            for (RedisFuture<String> f : sent) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            client.shutdown();
        }
        System.out.printf("dashboard timings: seeded %,d runs and %,d dead letters in %d ms%n", RUNS, DEAD_LETTERS,
                (System.nanoTime() - t) / 1_000_000);
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void everyPageOnManyRunsAndDeadLetters() throws Exception {
        Map<String, String> pages = new LinkedHashMap<>();
        pages.put("overview", "/");
        pages.put("topic", "/topics/runs");
        pages.put("dead letters", "/dead-letters?topic=runs");
        pages.put("scheduled", "/scheduled?topic=runs");
        pages.put("runs", "/runs");
        pages.put("runs, failed of one user", "/runs?status=failed&user=u10");
        pages.put("run", "/runs/" + someRun);
        for (Map.Entry<String, String> page : pages.entrySet()) {
            long[] millis = new long[20];
            HttpResponse<String> last = null;
            for (int i = -5; i < millis.length; i++) {
                long t = System.nanoTime();
                last = serve.send(serve.request(page.getValue()));
                if (i >= 0) {
                    millis[i] = (System.nanoTime() - t) / 1_000;
                }
                assertThat(last.statusCode()).as(page.getKey() + ": " + last.body()).isEqualTo(200);
            }
            Arrays.sort(millis);
            System.out.printf("dashboard timings: %-26s median %6.1f ms, slowest %6.1f ms (%,d bytes)%n",
                    page.getKey(), millis[millis.length / 2] / 1000.0, millis[millis.length - 1] / 1000.0,
                    last.body().length());
        }
        String overview = serve.send(serve.request("/")).body();
        assertThat(overview).contains("<b>" + DEAD_LETTERS + "</b> dead letters waiting")
                .contains("data-status=\"failed\">" + RUNS / 10 + "<");
        String deadLetters = serve.send(serve.request("/dead-letters?topic=runs")).body();
        assertThat(deadLetters).contains("<b id=\"dead-letter-count\">" + DEAD_LETTERS + "</b>")
                .contains("order 0 cannot be billed").contains("id=\"next-page\"");
        String failedOfOne = serve.send(serve.request("/runs?status=failed&user=u10")).body();
        assertThat(failedOfOne.split("class=\"run\"", -1).length - 1).isEqualTo(Math.min(50, RUNS / 1000));
    }
}
