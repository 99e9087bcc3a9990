package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Inspector;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * SIGTERM to a serve under load: the stopped process itself finishes everything it took before it exits, and
 * what it never took is left in the stream for the next worker. Checked on the state the stopped process left,
 * before anything else runs; a restarted worker under the same name would otherwise redo whatever a careless
 * stop dropped, and hide it.
 */
@Tag("slow")
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class SigtermTest {

    private static final String TOPIC = "runs";
    private static final String GROUP = "run-workers";
    private static final String CONSUMER = "serve-1";

    private final String schema = "sig_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String prefix = "rbsig-" + UUID.randomUUID().toString().substring(0, 8);
    private final Path log;
    /** The serve's handlers wait until this file exists ({@link SlowHandler}). */
    private final Path gate;

    SigtermTest() throws IOException {
        log = Files.createTempFile("runbus-serve", ".log");
        log.toFile().deleteOnExit();
        gate = log.resolveSibling(log.getFileName() + ".gate");
        gate.toFile().deleteOnExit();
    }

    @Test
    void sigtermDuringLoadLeavesNothingHalfDone() throws Exception {
        Process serve = startServe();
        try {
            int port = awaitPort();
            int n = 400;
            // Every run is accepted before the first ends (the handlers wait for the gate): the signal then comes
            // with most of them still in the stream, on a fast machine as on a slow one.
            List<String> accepted = submit(port, n);
            Files.writeString(gate, "open");
            Wait.until("some runs done", Duration.ofSeconds(60), () -> count("status = 'done'") >= 10);
            serve.destroy(); // SIGTERM
            assertThat(serve.waitFor(90, TimeUnit.SECONDS)).as("serve stopped within its shutdown timeout").isTrue();
            assertThat(serve.exitValue()).as("exit after a clean drain").isZero();
            assertThat(String.join("\n", output())).contains("stopping gracefully");

            // What the stopped process left, before any other worker runs.
            long doneAtStop = count("status = 'done'");
            assertThat(doneAtStop).as("the stop came mid-load").isBetween(10L, n - 1L);
            try (Bus bus = connect()) {
                assertThat(bus.inspector().pending(TOPIC, GROUP, 1000)).as("entries left pending").isEmpty();
                assertThat(bus.inspector().consumers(TOPIC, GROUP)).extracting(Inspector.ConsumerInfo::pending)
                        .as("pending per consumer").allMatch(p -> p == 0);
            }
            assertThat(count("attempts > 0 AND status <> 'done'")).as("runs it started but did not finish").isZero();
            assertThat(count("status = 'pending' AND attempts = 0")).as("runs it never took")
                    .isEqualTo(n - doneAtStop);

            // A new worker under the same name runs exactly what was never taken, once each.
            try (Bus bus = connect(); Runs runs = worker(bus)) {
                runs.startWorker(new SlowHandler());
                Wait.until("every accepted run done", Duration.ofSeconds(90), () -> count("status = 'done'") == n);
            }
            assertThat(count("attempts <> 1")).as("runs executed other than once").isZero();
            // Every accepted id is a run: one query for all of them (ids are the server's UUIDs).
            String ids = accepted.stream().map(id -> "'" + UUID.fromString(id) + "'").collect(Collectors.joining(","));
            assertThat(count("id IN (" + ids + ")")).as("accepted runs stored").isEqualTo(n);
            assertThat(query("SELECT count(*) FROM " + schema + ".messages")).as("replies").isEqualTo(2L * n);
        } finally {
            serve.destroyForcibly();
            RedisTarget.local().deleteKeys(prefix);
            TestServers.dropSchema(schema);
        }
    }

    private Process startServe() throws IOException {
        ProcessBuilder b = Hermetic.child(new ProcessBuilder(Hermetic.runbus("serve", "--port", "0", "--host", "127.0.0.1", "--redis-url",
                RedisTarget.local().uri(), "--database-url", DemoEndToEndTest.DATABASE, "--schema", schema,
                "--key-prefix", prefix, "--handler", SlowHandler.class.getName(), "--concurrency", "4", "--consumer",
                CONSUMER, "--min-idle", "10s", "--shutdown-timeout", "60s", "--submit-rate", "0")));
        b.environment().put(SlowHandler.GATE_VARIABLE, gate.toString());
        return b.redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private int awaitPort() {
        String ready = Wait.until("serve ready", Duration.ofSeconds(60),
                () -> output().stream().filter(l -> l.startsWith("runbus serving on")).findFirst().orElse(null),
                l -> l != null);
        Matcher m = Pattern.compile(":(\\d+) \\(").matcher(ready);
        assertThat(m.find()).isTrue();
        return Integer.parseInt(m.group(1));
    }

    /**
     * More runs than the worker holds (concurrency + 2 × batch size = 204), posted from 8 threads, so that most
     * are still waiting in the stream when the signal comes. Returns the accepted run ids.
     */
    private static List<String> submit(int port, int n) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        List<String> accepted = Collections.synchronizedList(new ArrayList<>());
        ExecutorService posters = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> posted = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String body = "{\"session_id\":\"s\",\"user_id\":\"u\",\"input\":\"load " + i + "\"}";
                posted.add(posters.submit(() -> {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                            + "/v1/runs")).header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).isEqualTo(201);
                    accepted.add(Json.MAPPER.readTree(r.body()).get("run_id").asText());
                    return null;
                }));
            }
            for (Future<?> f : posted) {
                f.get();
            }
        } finally {
            posters.shutdown();
        }
        assertThat(accepted).hasSize(n);
        return accepted;
    }

    private Bus connect() {
        return Bus.connect(BusConfig.builder(RedisTarget.local().uri()).keyPrefix(prefix).build());
    }

    private Runs worker(Bus bus) {
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
        ds.setURL(DemoEndToEndTest.DATABASE);
        return Runs.create(bus, ds, RunsConfig.builder().schema(schema).consumer(CONSUMER)
                .workerOptions(SubscribeOptions.builder().concurrency(8).blockTime(Duration.ofMillis(200)).build())
                .build());
    }

    private List<String> output() {
        try {
            return Files.readAllLines(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return List.of();
        }
    }

    private long count(String where) {
        return query("SELECT count(*) FROM " + schema + ".runs WHERE " + where);
    }

    private static long query(String sql) {
        try (Connection c = DriverManager.getConnection(DemoEndToEndTest.DATABASE);
             ResultSet rs = c.createStatement().executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (Exception e) {
            throw new IllegalStateException(sql, e);
        }
    }
}
