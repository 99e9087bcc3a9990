package dev.runbus.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import java.io.PrintWriter;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.UUID;

/**
 * A {@code serve} in this JVM on the test Redis and PostgreSQL, in a key prefix and schema of its own, with
 * HTTP helpers and the counts a test checks to see that a refused request wrote nothing.
 */
public final class TestServe implements AutoCloseable {

    public final RunbusServer server;
    final String schema;
    final String prefix;
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** A connection of its own for {@link #runRows}, which a fuzz test calls thousands of times. */
    private Connection counter;

    private TestServe(RunbusServer server, String schema, String prefix) {
        this.server = server;
        this.schema = schema;
        this.prefix = prefix;
    }

    /** A server on 127.0.0.1, a free port, with {@code extra} over the test defaults. */
    public static TestServe start(Map<Setting, String> extra) {
        String schema = "serve_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        String prefix = "rbserve-" + UUID.randomUUID().toString().substring(0, 8);
        Map<Setting, String> flags = new EnumMap<>(Setting.class);
        flags.put(Setting.REDIS_URL, RedisTarget.local().uri());
        flags.put(Setting.DATABASE_URL, DemoEndToEndTest.DATABASE);
        flags.put(Setting.SCHEMA, schema);
        flags.put(Setting.KEY_PREFIX, prefix);
        flags.put(Setting.PORT, "0");
        flags.put(Setting.HOST, "127.0.0.1");
        flags.put(Setting.MIN_IDLE, "1s");
        flags.put(Setting.CLAIM_INTERVAL, "100ms");
        flags.put(Setting.SHUTDOWN_TIMEOUT, "5s");
        // Gauges that tests wait for in /metrics follow in a fraction of a second rather than the default 10 s.
        flags.put(Setting.METER_REFRESH, "200ms");
        // Named, as serve on given servers requires; the echo is what most HTTP tests want to see.
        flags.put(Setting.HANDLER, DemoHandler.class.getName());
        flags.putAll(extra);
        try {
            return new TestServe(RunbusServer.start(Settings.resolve(flags, Map.of(), null),
                    new PrintWriter(Writer.nullWriter())), schema, prefix);
        } catch (RuntimeException e) {
            clean(schema, prefix);
            throw e;
        }
    }

    String base() {
        return (server.tls() ? "https" : "http") + "://127.0.0.1:" + server.port();
    }

    HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(base() + path)).timeout(Duration.ofSeconds(20));
    }

    HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(String path, String token) throws Exception {
        HttpRequest.Builder b = request(path);
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return send(b);
    }

    HttpResponse<String> submit(String input, String token) throws Exception {
        HttpRequest.Builder b = request("/v1/runs").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(HttpApiTest.runBody(input)));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return send(b);
    }

    static JsonNode json(HttpResponse<String> r) throws Exception {
        return Json.MAPPER.readTree(r.body());
    }

    /** Rows in the runs table. */
    synchronized long runRows() throws Exception {
        if (counter == null) {
            counter = DriverManager.getConnection(DemoEndToEndTest.DATABASE);
        }
        try (ResultSet rs = counter.createStatement().executeQuery("SELECT count(*) FROM " + schema + ".runs")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Ids of every run, oldest first. */
    java.util.List<String> runIds() throws Exception {
        java.util.List<String> out = new java.util.ArrayList<>();
        try (Connection c = DriverManager.getConnection(DemoEndToEndTest.DATABASE);
             ResultSet rs = c.createStatement().executeQuery("SELECT id FROM " + schema
                     + ".runs ORDER BY created_at, id")) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    /** Entries in the runs topic's stream (one partition). */
    long streamLength() {
        return RedisTarget.local().redis().xlen(prefix + ":{runs}:stream");
    }

    @Override
    public void close() {
        try {
            if (counter != null) {
                counter.close();
            }
        } catch (Exception ignored) {
            // closing anyway
        }
        try {
            server.close();
        } finally {
            clean(schema, prefix);
        }
    }

    private static void clean(String schema, String prefix) {
        RedisTarget.local().deleteKeys(prefix);
        TestServers.dropSchema(schema);
    }
}
