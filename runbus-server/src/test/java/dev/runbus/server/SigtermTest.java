package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import dev.runbus.testing.RedisTarget;
import dev.runbus.testing.Wait;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** SIGTERM to a serve under load loses nothing: what it accepted is finished by it or by the next worker. */
@Tag("slow")
class SigtermTest {

    private final Path log;

    SigtermTest() throws java.io.IOException {
        log = java.nio.file.Files.createTempFile("runbus-serve", ".log");
        log.toFile().deleteOnExit();
    }

    private List<String> output() {
        try {
            return java.nio.file.Files.readAllLines(log, StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            return List.of();
        }
    }

    @Test
    void sigtermDuringLoadLosesNothing() throws Exception {
        String schema = "sig_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        String prefix = "rbsig-" + UUID.randomUUID().toString().substring(0, 8);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process serve = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), RunbusCli.class.getName(),
                "serve", "--port", "0", "--host", "127.0.0.1", "--redis-url", RedisTarget.local().uri(),
                "--database-url", DemoEndToEndTest.DATABASE, "--schema", schema, "--key-prefix", prefix,
                "--handler", SlowHandler.class.getName(), "--concurrency", "4", "--consumer", "serve-1",
                "--min-idle", "2s").redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            String ready = Wait.until("serve ready", Duration.ofSeconds(60),
                    () -> output().stream().filter(l -> l.startsWith("runbus serving on")).findFirst().orElse(null),
                    l -> l != null);
            Matcher m = Pattern.compile(":(\\d+) \\(").matcher(ready);
            assertThat(m.find()).isTrue();
            int port = Integer.parseInt(m.group(1));
            HttpClient http = HttpClient.newHttpClient();
            // More than the worker holds (concurrency + 2 × batch size = 204), posted from 8 threads so that most
            // are still waiting in the stream when the signal comes.
            int n = 400;
            List<String> accepted = Collections.synchronizedList(new ArrayList<>());
            ExecutorService posters = Executors.newFixedThreadPool(8);
            List<Future<?>> posted = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int k = i;
                posted.add(posters.submit(() -> {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                            + "/v1/runs")).header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers
                            .ofString("{\"session_id\":\"s\",\"user_id\":\"u\",\"input\":\"load " + k + "\"}"))
                            .build(), HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).isEqualTo(201);
                    accepted.add(Json.MAPPER.readTree(r.body()).get("run_id").asText());
                    return null;
                }));
            }
            for (Future<?> f : posted) {
                f.get();
            }
            posters.shutdown();
            assertThat(accepted).hasSize(n);
            Wait.until("some runs done", Duration.ofSeconds(30), () -> count(schema, "done") >= 10);
            serve.destroy(); // SIGTERM
            assertThat(serve.waitFor(60, TimeUnit.SECONDS)).as("serve stopped within its shutdown timeout").isTrue();
            assertThat(serve.exitValue()).isEqualTo(143); // ended by the signal, after its shutdown hook
            assertThat(String.join("\n", output())).contains("stopping gracefully");
            long doneAtStop = count(schema, "done");
            assertThat(doneAtStop).isLessThan(n); // the stop really came mid-load

            // A new worker under the same name picks up everything that was left.
            try (Bus bus = Bus.connect(BusConfig.builder(RedisTarget.local().uri()).keyPrefix(prefix).build())) {
                org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
                ds.setURL(DemoEndToEndTest.DATABASE);
                try (Runs runs = Runs.create(bus, ds, RunsConfig.builder().schema(schema).consumer("serve-1")
                        .workerOptions(SubscribeOptions.builder().concurrency(8).blockTime(Duration.ofMillis(200))
                                .build()).build())) {
                    runs.startWorker(new SlowHandler());
                    Wait.until("every accepted run done", Duration.ofSeconds(60), () -> count(schema, "done") == n);
                }
            }
            for (String id : accepted) {
                assertThat(replies(schema, id)).as("replies of %s", id).isEqualTo(2);
            }
        } finally {
            serve.destroyForcibly();
            RedisTarget.local().deleteKeys(prefix);
            try (Connection c = DriverManager.getConnection(DemoEndToEndTest.DATABASE)) {
                c.createStatement().execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
        }
    }

    private static long count(String schema, String status) {
        return query("SELECT count(*) FROM " + schema + ".runs WHERE status = '" + status + "'");
    }

    private static long replies(String schema, String runId) {
        return query("SELECT count(*) FROM " + schema + ".messages WHERE run_id = '" + runId + "'");
    }

    private static long query(String sql) {
        try (Connection c = DriverManager.getConnection(DemoEndToEndTest.DATABASE);
             ResultSet rs = c.createStatement().executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (Exception e) {
            return -1;
        }
    }
}
