package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code GET /v1/runs} on a real serve over many runs, each filter timed over HTTP: p50 and p99 of {@value #REQUESTS}
 * requests after {@value #WARM_UP} to warm up. docs/http-api.md quotes what it prints for 1,000,000 runs. Not a test
 * of the build (its name matches none of surefire's patterns, and the times depend on the machine): run it by name,
 *
 * <pre>
 * mvn -B -q -pl runbus-server -am test -Dtest=HttpListingLatency -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Drunbus.listing.runs=1000000
 * </pre>
 *
 * The runs are written by one {@code INSERT … SELECT generate_series} into the serve's scratch schema (dropped after):
 * three a second of creation time, 1000 users, 5000 sessions of 200 runs spread over the whole table, one run in a
 * thousand failed, and one old session of 3 runs among the first. The session filters are timed again without
 * V009's index, as they were before it.
 */
@Timeout(3600)
class HttpListingLatency {

    static final int RUNS = Integer.getInteger("runbus.listing.runs", 100_000);
    static final int REQUESTS = 200;
    static final int WARM_UP = 20;

    @Test
    void timeEachFilter() throws Exception {
        try (TestServe serve = TestServe.start(Map.of(Setting.READ_RATE, "0"))) {
            long t = System.nanoTime();
            sql(serve, "INSERT INTO " + serve.schema + ".runs (id, idempotency_key, input_hash, session_id, user_id,"
                    + " input, status, attempts, created_at, updated_at) SELECT gen_random_uuid(), 'bench-' || i, 'h',"
                    + " CASE WHEN i <= 3 THEN 'old-session' ELSE 's' || (i % 5000) END, 'u' || (i % 1000),"
                    + " repeat('x', 200), CASE WHEN i % 1000 = 0 THEN 'failed' ELSE 'done' END, 1,"
                    + " timestamptz '2026-01-01' + (i / 3) * interval '1 second', now()"
                    + " FROM generate_series(1, " + RUNS + ") i");
            sql(serve, "ANALYZE " + serve.schema + ".runs");
            System.out.printf("inserted %,d runs in %d s%n", RUNS, (System.nanoTime() - t) / 1_000_000_000);

            String middle = "2026-01-01T00:00:00Z";
            String dayAfter = java.time.Instant.parse(middle).plusSeconds(RUNS / 6).toString();
            String page2 = serve.get("/v1/runs", null).body().replaceAll(".*\"next_cursor\":\"([^\"]+)\".*", "$1");
            Map<String, String> filters = new LinkedHashMap<>();
            filters.put("none", "/v1/runs");
            filters.put("status=failed", "/v1/runs?status=failed");
            filters.put("user=u7", "/v1/runs?user=u7");
            filters.put("session=s7 (200 runs)", "/v1/runs?session=s7");
            filters.put("session=old-session (3 oldest runs)", "/v1/runs?session=old-session");
            filters.put("created_after & created_before (first half)", "/v1/runs?created_after=" + enc(middle)
                    + "&created_before=" + enc(dayAfter));
            filters.put("cursor (page 2, no filter)", "/v1/runs?cursor=" + enc(page2));
            System.out.printf("%n| filter | p50 | p99 |%n|---|---|---|%n");
            for (Map.Entry<String, String> f : filters.entrySet()) {
                report(serve, f.getKey(), f.getValue());
            }
            sql(serve, "DROP INDEX " + serve.schema + ".runs_session_created_idx");
            report(serve, "session=s7, without V009's index", filters.get("session=s7 (200 runs)"));
            report(serve, "session=old-session, without V009's index",
                    filters.get("session=old-session (3 oldest runs)"));
        }
    }

    private static void report(TestServe serve, String name, String path) throws Exception {
        for (int i = 0; i < WARM_UP; i++) {
            get(serve, path);
        }
        long[] nanos = new long[REQUESTS];
        for (int i = 0; i < REQUESTS; i++) {
            long t = System.nanoTime();
            get(serve, path);
            nanos[i] = System.nanoTime() - t;
        }
        Arrays.sort(nanos);
        System.out.printf("| %s | %.1f ms | %.1f ms |%n", name, nanos[REQUESTS / 2] / 1e6,
                nanos[(int) Math.ceil(REQUESTS * 0.99) - 1] / 1e6);
    }

    private static void get(TestServe serve, String path) throws Exception {
        HttpResponse<String> r = serve.get(path, null);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
    }

    private static void sql(TestServe serve, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(DemoEndToEndTest.DATABASE); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

}
