package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.server.embedded.EmbeddedPostgresServer;
import dev.runbus.testkit.Wait;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM to a serve on its embedded Redis and PostgreSQL, under HTTP load. Nothing may stop before what depends
 * on it has: the HTTP API first, then the worker drains and the sweeper stops, then the connections, and only
 * then the embedded servers, which therefore must not be stopped by shutdown hooks of their own running at the
 * same time. Checked from the outside: every answer the clients got is whole, every run answered 201 is in the
 * database (inspected after, by starting the embedded PostgreSQL again on the same --data-dir), every run the
 * worker started finished, the log shows the order, and the exit code is 0.
 *
 * <p>One SIGTERM under load, made once for the class: each test checks another part of what it left.
 */
@Tag("slow")
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ShutdownOrderTest {

    private static final List<String> ORDER = List.of("stopping gracefully", "stopped HTTP API",
            "drained worker, stopped sweeper", "stopped embedded PostgreSQL", "stopped embedded Redis",
            "runbus: stopped");

    /** The stopped serve's data directory: its embedded PostgreSQL is started again on it for the checks. */
    @TempDir
    static Path dataDir;
    private static Stopped stopped;

    @BeforeAll
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    static void sigtermUnderLoad() throws Exception {
        stopped = serveUnderLoadThenSigterm(dataDir);
    }

    @Test
    void sigtermStopsTheEmbeddedServersOnlyAfterServeDrained() {
        Stopped s = stopped;
        assertThat(s.exitCode).as(s.output).isZero();
        // The order, from the child's own log.
        List<Integer> at = ORDER.stream().map(s.output::indexOf).toList();
        assertThat(at).as(s.output).doesNotContain(-1).isSorted();
        // Nothing it drained into went away under it: no failed Redis or PostgreSQL call on the way down.
        assertThat(s.output).doesNotContain("Exception").doesNotContain("ERROR").doesNotContain("WARN");
        assertThat(s.load.malformed).as("answers that were neither a run nor an error").isEmpty();
        assertThat(s.load.accepted).as("accepted runs").hasSizeGreaterThanOrEqualTo(200);
        // What the stopped serve left in its PostgreSQL.
        assertThat(s.missing).as("runs answered 201 but not stored").isEmpty();
        assertThat(s.done).as("runs done before the stop").isPositive();
        assertThat(s.startedNotFinished).as("runs started but not finished").isZero();
    }

    /**
     * Requests in flight when SIGTERM comes are answered, not cut: a client that sent a run must learn whether it
     * was accepted. Jetty stops gracefully with a stop timeout (Javalin 6 leaves it at 0, which closes every
     * connection at once).
     */
    @Test
    void requestsInFlightAtSigtermAreAnsweredNotCut() {
        Stopped s = stopped;
        assertThat(s.load.cut).as("requests cut off after the server accepted them").isEmpty();
    }

    /** What a SIGTERM under load left: the exit, the log, the clients' answers, the database. */
    private record Stopped(int exitCode, String output, Load load, List<String> missing, long done,
                           long startedNotFinished) {
    }

    private static Stopped serveUnderLoadThenSigterm(Path dataDir) throws Exception {
        Path log = dataDir.resolve("serve.log");
        Process serve = startServe(dataDir, log);
        Load load = null;
        try {
            int port = awaitPort(log);
            load = new Load(port);
            Load running = load;
            Wait.until("200 runs accepted", Duration.ofSeconds(60), () -> running.accepted.size() >= 200);
            serve.destroy(); // SIGTERM, with requests in flight
            assertThat(serve.waitFor(120, TimeUnit.SECONDS)).as("serve stopped").isTrue();
            load.stop();
            String output = Files.readString(log, StandardCharsets.UTF_8);
            // Inspected by starting the embedded PostgreSQL again on the data the stopped serve left.
            // With the superuser password serve kept beside its data.
            String password = Files.readAllLines(dataDir.resolve(EmbeddedPostgresServer.PASSWORD_FILE)).get(0);
            try (EmbeddedPostgres pg = EmbeddedPostgres.builder().setDataDirectory(dataDir.resolve("postgres"))
                    .setConnectConfig("password", password)
                    .setCleanDataDirectory(false).setRegisterShutdownHook(false).start();
                 Connection c = pg.getPostgresDatabase().getConnection()) {
                List<String> missing = new ArrayList<>();
                for (String id : load.accepted) {
                    if (count(c, "id = '" + id + "'") != 1) {
                        missing.add(id);
                    }
                }
                return new Stopped(serve.exitValue(), output, load, missing, count(c, "status = 'done'"),
                        count(c, "attempts > 0 AND status <> 'done'"));
            }
        } finally {
            if (load != null) {
                load.stop();
            }
            serve.destroyForcibly();
        }
    }

    private static Process startServe(Path dataDir, Path log) throws IOException {
        ProcessBuilder b = Hermetic.child(new ProcessBuilder(Hermetic.runbus("serve", "--port", "0", "--data-dir", dataDir.toString(), "--handler",
                SlowHandler.class.getName(), "--concurrency", "4", "--consumer", "serve-1", "--shutdown-timeout",
                "60s")));
        // Load, not abuse: no per-client submission limit.
        b.environment().put("RUNBUS_SUBMIT_RATE", "0");
        return b.redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static int awaitPort(Path log) {
        String ready = Wait.until("serve ready", Duration.ofSeconds(120), () -> read(log).lines()
                .filter(l -> l.startsWith("runbus serving on")).findFirst().orElse(null), l -> l != null);
        Matcher m = Pattern.compile(":(\\d+) \\(").matcher(ready);
        assertThat(m.find()).isTrue();
        return Integer.parseInt(m.group(1));
    }

    /** Eight clients posting runs until the server stops listening, each answer sorted by how it ended. */
    private static final class Load {
        final List<String> accepted = Collections.synchronizedList(new ArrayList<>());
        final List<String> malformed = Collections.synchronizedList(new ArrayList<>());
        final List<String> cut = Collections.synchronizedList(new ArrayList<>());
        private final AtomicBoolean stopped = new AtomicBoolean();
        private final AtomicInteger next = new AtomicInteger();
        private final ExecutorService clients = Executors.newFixedThreadPool(8);
        private final List<Future<?>> running = new ArrayList<>();

        Load(int port) {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            for (int t = 0; t < 8; t++) {
                running.add(clients.submit(() -> {
                    while (!stopped.get()) {
                        if (!post(http, port)) {
                            return;
                        }
                    }
                }));
            }
        }

        /** False once nothing listens any more. */
        private boolean post(HttpClient http, int port) {
            int i = next.getAndIncrement();
            String body = "{\"session_id\":\"s\",\"user_id\":\"u" + i % 16 + "\",\"input\":\"load " + i + "\"}";
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/runs"))
                    .header("Content-Type", "application/json").header("Idempotency-Key", "load-" + i)
                    .timeout(Duration.ofSeconds(90)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
            HttpResponse<String> r;
            try {
                try {
                    r = http.send(request, HttpResponse.BodyHandlers.ofString());
                } catch (ConnectException refused) {
                    return false;
                } catch (IOException closedUnderIt) {
                    // A request written to an idle kept-alive connection just as the stopping server closed it was
                    // never read: HTTP/1.1 cannot tell the client, which sends it again under the same idempotency
                    // key (what a client should do). Cut is a request the server read and did not answer.
                    r = http.send(request, HttpResponse.BodyHandlers.ofString());
                }
            } catch (ConnectException refused) {
                return false;
            } catch (IOException e) {
                cut.add("load-" + i + ": " + e);
                return !stopped.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            try {
                JsonNode json = Json.MAPPER.readTree(r.body());
                if (r.statusCode() == 201 && json.hasNonNull("run_id")) {
                    accepted.add(json.get("run_id").asText());
                    return true;
                }
                if (r.statusCode() != 201 && json.hasNonNull("error")) {
                    return true;
                }
            } catch (IOException notJson) {
                // recorded below, unless it is the stopping server's own whole answer
            }
            malformed.add(r.statusCode() + " " + r.body());
            return true;
        }

        void stop() throws Exception {
            stopped.set(true);
            for (Future<?> f : running) {
                f.get(120, TimeUnit.SECONDS);
            }
            clients.shutdown();
        }
    }

    private static long count(Connection c, String where) throws Exception {
        try (ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM runbus.runs WHERE " + where)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static String read(Path log) {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
