package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.RedisSentinelProcess;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import io.lettuce.core.cluster.models.partitions.ClusterPartitionParser;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
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
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The master holding the runs topic dies under load: a {@code runbus serve} and two {@code runbus worker}
 * processes run 2,500 runs submitted over HTTP (1 % poison inputs, which the {@link DemoHandler} fails on every
 * attempt), and once 750 have ended the Redis master serving the topic's stream is killed with SIGKILL and its
 * replica promoted: on a Redis Cluster with {@code CLUSTER FAILOVER TAKEOVER} sent to the replica, behind Sentinel
 * by the Sentinels' own election. Replication is asynchronous, so the new master may lack the newest triggers,
 * deliveries and acks: lost triggers are published again by the sweeper, deliveries whose acks were lost are
 * delivered again and absorbed by the runs layer's guards.
 *
 * <p>Checked in PostgreSQL once every run has ended: every accepted run is done or failed, the failed ones are
 * exactly the poison ones, and every done run has one set of replies (two rows, from one execution), every failed
 * run none. The times from the kill to the first completion and to the last, and the counts, are printed.
 *
 * <p>The processes use the demo's short retry settings (min-idle 2 s, claim every 500 ms) and a sweeper that runs
 * every second and examines runs untouched for 5 s, so that runs whose triggers the failover lost are found
 * within seconds rather than the defaults' minutes.
 */
@Tag("slow")
@Tag("alone") // its processes hold about half of PostgreSQL's connections: runbus-server/pom.xml
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FailoverUnderLoadTest {

    private static final String DATABASE = TestServers.databaseUrl();
    private static final String TOPIC = "runs";
    private static final int RUNS = 2500;
    /** Every 100th input is poison: 1 %. */
    private static final int POISON_EVERY = 100;
    /** Runs ended (done or failed) before the master is killed. */
    private static final int KILL_AFTER = 750;
    private static final int POSTERS = 32;
    private static final Duration STARTUP = Duration.ofSeconds(60);
    private static final Duration CONVERGENCE = Duration.ofSeconds(90);
    private static final Pattern SECOND_REPLY = Pattern.compile("run ([0-9a-f-]{36}), attempt (\\d+)");

    private final String schema = "fo_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String prefix = "rbfo-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<Child> children = new ArrayList<>();

    /** The Redis side of a scenario: kill the master of the topic, promote its replica, tell when promoted. */
    private interface Failover {
        /** The Redis URL the processes are given. */
        String url();

        /** Checks, before the kill, that the node about to die is the one serving the topic's stream. */
        void checkVictim();

        /** SIGKILL to the master. */
        void kill();

        /** Starts the promotion (or leaves it to the deployment), right after the kill. */
        void promote();

        /** Whether the replica is master now, as the deployment sees it. */
        boolean promoted();

        /** What the live nodes say, for a failure message. */
        String describe();
    }

    /**
     * SIGTERM to every process still running, all at once; what has not ended 15 s later gets SIGKILL. The
     * scenario calls it before its Redis deployment goes, so that a graceful stop can still flush its acks.
     */
    private void stopChildren(String label) throws InterruptedException {
        long start = System.nanoTime();
        List<Child> running = children.stream().filter(c -> c.process.isAlive()).toList();
        if (running.isEmpty()) {
            return;
        }
        running.forEach(c -> c.process.destroy());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        for (Child c : running) {
            if (!c.process.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                System.out.printf("FAILOVER[%s] %s did not stop within 15 s of SIGTERM; killed%n", label, c.name);
                c.process.destroyForcibly();
                c.process.waitFor(10, TimeUnit.SECONDS);
            }
        }
        System.out.printf("FAILOVER[%s] processes stopped in %d ms%n", label, millisSince(start));
    }

    @AfterEach
    void stopEverything() throws Exception {
        stopChildren("after");
        TestServers.dropSchema(schema);
    }

    @Test
    void clusterMasterOfTheRunsTopicKilledMidLoad() throws Exception {
        long starting = System.nanoTime();
        try (RedisClusterProcess cluster = RedisClusterProcess.start(3)) {
            System.out.printf("FAILOVER[cluster] 3 masters and 3 replicas ready in %d ms%n", millisSince(starting));
            String streamKey = prefix + ":{" + TOPIC + "}:stream";
            long slotOfKey = RedisClusterProcess.call(cluster.masters().get(0), r -> r.clusterKeyslot(streamKey));
            int slot = (int) slotOfKey;
            RedisClusterNode owner = masterOf(cluster.masters().get(0), slot);
            int index = -1;
            for (int i = 0; i < cluster.masters().size(); i++) {
                if (cluster.masters().get(i).port() == owner.getUri().getPort()) {
                    index = i;
                }
            }
            assertThat(index).as("the master of slot %d among the cluster's masters", slot).isNotNegative();
            RedisServerProcess victim = cluster.masters().get(index);
            RedisServerProcess replica = cluster.replicaOf(index);
            System.out.printf("FAILOVER[cluster] stream %s is in slot %d, served by master :%d (replica :%d)%n",
                    streamKey, slot, victim.port(), replica.port());
            scenario("cluster", new Failover() {
                @Override
                public String url() {
                    return "redis-cluster://" + cluster.seeds();
                }

                @Override
                public void checkVictim() {
                    long exists = RedisClusterProcess.call(victim, r -> r.exists(streamKey));
                    assertThat(exists).as("the stream lives on the master about to be killed").isEqualTo(1L);
                    String replication = RedisClusterProcess.call(replica, r -> r.info("replication"));
                    assertThat(replication).contains("master_link_status:up");
                }

                @Override
                public void kill() {
                    victim.close();
                }

                @Override
                public void promote() {
                    // TAKEOVER: no agreement of the other masters needed, so no wait for the node timeout.
                    String reply = RedisClusterProcess.call(replica, r -> r.clusterFailover(false, true));
                    assertThat(reply).isEqualTo("OK");
                }

                @Override
                public boolean promoted() {
                    String info = RedisClusterProcess.call(replica, r -> r.info("replication"));
                    if (!info.contains("role:master")) {
                        return false;
                    }
                    // Every live node names the replica as the slot's master.
                    for (RedisServerProcess n : cluster.nodes()) {
                        if (n == victim) {
                            continue;
                        }
                        RedisClusterNode m = masterOf(n, slot);
                        if (m == null || m.getUri().getPort() != replica.port()) {
                            return false;
                        }
                    }
                    return true;
                }

                @Override
                public String describe() {
                    StringBuilder b = new StringBuilder();
                    for (RedisServerProcess n : cluster.nodes()) {
                        if (n != victim) {
                            String nodes = RedisClusterProcess.call(n, r -> r.clusterNodes());
                            String replication = RedisClusterProcess.call(n, r -> r.info("replication"));
                            b.append("node :").append(n.port()).append(" CLUSTER NODES:\n").append(nodes)
                                    .append(replication).append('\n');
                        }
                    }
                    return b.toString();
                }
            });
        }
    }

    @Test
    void sentinelMasterKilledMidLoad() throws Exception {
        long starting = System.nanoTime();
        try (RedisSentinelProcess set = RedisSentinelProcess.start()) {
            System.out.printf("FAILOVER[sentinel] master, replica and 3 Sentinels ready in %d ms%n",
                    millisSince(starting));
            assertThat(set.currentMasterPort()).isEqualTo(set.master().port());
            System.out.printf("FAILOVER[sentinel] master :%d, replica :%d, Sentinels %s%n", set.master().port(),
                    set.replica().port(), set.sentinelAddresses());
            scenario("sentinel", new Failover() {
                @Override
                public String url() {
                    return "redis-sentinel://" + set.sentinelAddresses() + "#" + RedisSentinelProcess.MASTER_NAME;
                }

                @Override
                public void checkVictim() {
                    assertThat(set.currentMasterPort()).isEqualTo(set.master().port());
                    long exists = RedisClusterProcess.call(set.master(), r -> r.exists(prefix + ":{" + TOPIC
                            + "}:stream"));
                    assertThat(exists).as("the stream lives on the master about to be killed").isEqualTo(1L);
                }

                @Override
                public void kill() {
                    set.master().close();
                }

                @Override
                public void promote() {
                    // The Sentinels elect a new master on their own (down after 1 s, quorum 2).
                }

                @Override
                public boolean promoted() {
                    return set.sentinels().stream().allMatch(s -> RedisSentinelProcess.sentinel(s, c -> String.valueOf(
                            c.sync().getMasterAddrByName(RedisSentinelProcess.MASTER_NAME))
                            .endsWith(":" + set.replica().port())));
                }

                @Override
                public String describe() {
                    StringBuilder b = new StringBuilder();
                    for (RedisServerProcess sentinel : set.sentinels()) {
                        String named = RedisSentinelProcess.sentinel(sentinel, c -> String.valueOf(
                                c.sync().getMasterAddrByName(RedisSentinelProcess.MASTER_NAME)));
                        b.append("Sentinel :").append(sentinel.port()).append(" names master ").append(named)
                                .append('\n');
                    }
                    String replication = RedisClusterProcess.call(set.replica(), r -> r.info("replication"));
                    return b.append(replication).toString();
                }
            });
        }
    }

    /** The master of a slot as one node of the cluster sees it, or null when it knows none. */
    private static RedisClusterNode masterOf(RedisServerProcess node, int slot) {
        String nodes = RedisClusterProcess.call(node, r -> r.clusterNodes());
        return ClusterPartitionParser.parse(nodes).getMasterBySlot(slot);
    }

    // ------------------------------------------------------------------------------------------------ scenario

    private void scenario(String label, Failover failover) throws Exception {
        try {
            runUnderLoad(label, failover);
        } finally {
            stopChildren(label);
        }
    }

    private void runUnderLoad(String label, Failover failover) throws Exception {
        long began = System.nanoTime();
        List<String> common = List.of("--redis-url", failover.url(), "--database-url", DATABASE, "--schema", schema,
                "--key-prefix", prefix, "--concurrency", "16", "--min-idle", "2s", "--claim-interval", "500ms",
                "--max-deliveries", "3", "--sweep-interval", "1s", "--sweep-threshold", "5s",
                "--shutdown-timeout", "5s");
        // All three at once: migrations take an advisory lock, so concurrent starts apply them once.
        Child serve = start("serve", common, "serve", "--port", "0", "--host", "127.0.0.1", "--consumer", "serve-1",
                "--submit-rate", "0", "--handler", DemoHandler.class.getName());
        Child w1 = start("worker-1", common, "worker", "--consumer", "worker-1", "--handler",
                DemoHandler.class.getName());
        Child w2 = start("worker-2", common, "worker", "--consumer", "worker-2", "--handler",
                DemoHandler.class.getName());
        int port = serve.awaitPort();
        w1.awaitLine("runbus worker worker-1 ready");
        w2.awaitLine("runbus worker worker-2 ready");
        System.out.printf("FAILOVER[%s] serve and 2 workers ready after %d ms%n", label, millisSince(began));

        Submitter submitter = new Submitter(port);
        long loadStart = System.nanoTime();
        Future<?> load = submitter.start();
        Thread progress = new Thread(() -> {
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    System.out.printf("PROGRESS[%s] %d ms accepted=%d ended=%d%n", label, millisSince(loadStart),
                            submitter.accepted.size(), ended());
                    Thread.sleep(2000); // a progress line every 2 s, for reading the report
                }
            } catch (Exception e) {
                // stopped
            }
        });
        progress.setDaemon(true);
        progress.start();
        try {
            Wait.until(KILL_AFTER + " runs ended before the kill", CONVERGENCE, () -> {
                failIfDied();
                return ended() >= KILL_AFTER;
            });
            failover.checkVictim();
            long endedAtKill = ended();
            int acceptedAtKill = submitter.accepted.size();
            long killing = System.nanoTime();
            failover.kill();
            // Times are measured from here: the master's process has ended (the kill waits for it), so nothing
            // that happens later can have gone through it.
            Instant killedAt = Instant.now();
            long killed = System.nanoTime();
            failover.promote();
            System.out.printf("FAILOVER[%s] master killed %d ms into the load (SIGKILL sent and the process gone"
                    + " in %d ms): %d runs ended, %d of %d accepted%n", label, millisSince(loadStart),
                    (killed - killing) / 1_000_000, endedAtKill, acceptedAtKill, RUNS);
            try {
                Wait.until("the replica promoted", Duration.ofSeconds(60), failover::promoted);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\n" + failover.describe(), e);
            }
            long promotedMs = millisSince(killed);

            load.get(CONVERGENCE.toSeconds(), TimeUnit.SECONDS);
            assertThat(submitter.accepted).as("accepted runs (retried until accepted)").hasSize(RUNS);
            Wait.until("every accepted run done or failed", CONVERGENCE, () -> {
                failIfDied();
                return ended() == RUNS;
            });
            long convergedSeenMs = millisSince(killed);

            Figures f = figures(killedAt);
            System.out.printf("FAILOVER[%s] replica promoted %d ms after the kill%n", label, promotedMs);
            System.out.printf("FAILOVER[%s] kill -> first run completed after it: %d ms (a run first started after"
                    + " the kill: %d ms; a run submitted after the kill: %s)%n", label, f.firstCompletionMs,
                    f.firstStartedAfterKillMs, f.firstSubmittedAfterKillMs < 0 ? "none submitted after the kill"
                            : f.firstSubmittedAfterKillMs + " ms");
            System.out.printf("FAILOVER[%s] kill -> convergence (all %d runs ended): %d ms (last finished_at; the"
                    + " test saw it at %d ms)%n", label, RUNS, f.lastCompletionMs, convergedSeenMs);
            System.out.printf("FAILOVER[%s] counts: done=%d failed=%d poison=%d runs_with_more_than_one_attempt=%d"
                    + " extra_attempts=%d runs_republished_by_sweeper=%d republishes=%d submit_retries=%d"
                    + " accepted_at_kill=%d ended_at_kill=%d%n", label, f.done, f.failed, submitter.poison.size(),
                    f.retriedRuns, f.extraAttempts, f.republishedRuns, f.republishes, submitter.retries.get(),
                    acceptedAtKill, endedAtKill);
            for (Child c : children) {
                System.out.printf("FAILOVER[%s] %s log: %d lines, %d WARN, %d ERROR%n", label, c.name,
                        c.output().size(), c.count(" WARN "), c.count(" ERROR "));
            }
            System.out.printf("FAILOVER[%s] whole scenario %d ms%n", label, millisSince(began));

            assertEveryRunEndedAsPlanned(submitter);
        } finally {
            progress.interrupt();
            submitter.stop();
        }
    }

    private void assertEveryRunEndedAsPlanned(Submitter submitter) throws SQLException {
        Map<UUID, String> status = new HashMap<>();
        Map<UUID, String> input = new HashMap<>();
        try (Connection c = DriverManager.getConnection(DATABASE);
             ResultSet rs = c.createStatement().executeQuery("SELECT id, status, input FROM " + schema + ".runs")) {
            while (rs.next()) {
                UUID id = rs.getObject(1, UUID.class);
                status.put(id, rs.getString(2));
                input.put(id, rs.getString(3));
            }
        }
        assertThat(status.keySet()).as("the runs in PostgreSQL are the accepted ones")
                .isEqualTo(submitter.accepted.keySet());
        assertThat(status.values()).as("statuses").allMatch(s -> s.equals("done") || s.equals("failed"));
        Set<UUID> failed = new HashSet<>();
        status.forEach((id, s) -> {
            if (s.equals("failed")) {
                failed.add(id);
            }
        });
        assertThat(failed).as("the failed runs are exactly the poison runs").isEqualTo(submitter.poison);
        assertThat(submitter.poison).hasSize(RUNS / POISON_EVERY);

        // Replies: a done run has exactly one set (2 rows, seq 1 and 2, from one execution); a failed run none.
        Map<UUID, List<String[]>> replies = new HashMap<>();
        try (Connection c = DriverManager.getConnection(DATABASE);
             ResultSet rs = c.createStatement().executeQuery("SELECT run_id, seq, role, content FROM " + schema
                     + ".messages ORDER BY run_id, seq")) {
            while (rs.next()) {
                replies.computeIfAbsent(rs.getObject(1, UUID.class), k -> new ArrayList<>())
                        .add(new String[] {rs.getString(2), rs.getString(3), rs.getString(4)});
            }
        }
        List<String> wrong = new ArrayList<>();
        status.forEach((id, s) -> {
            List<String[]> r = replies.getOrDefault(id, List.of());
            if (s.equals("failed")) {
                if (!r.isEmpty()) {
                    wrong.add(id + " failed with " + r.size() + " replies");
                }
                return;
            }
            Matcher m = r.size() == 2 ? SECOND_REPLY.matcher(r.get(1)[2]) : null;
            boolean ok = r.size() == 2 && r.get(0)[0].equals("1") && r.get(1)[0].equals("2")
                    && r.get(0)[2].equals("You said: " + input.get(id)) && m.matches()
                    && m.group(1).equals(id.toString());
            if (!ok) {
                List<String> shown = new ArrayList<>();
                r.forEach(row -> shown.add(String.join("|", row)));
                wrong.add(id + " done with replies " + shown);
            }
        });
        assertThat(wrong).as("runs without exactly one set of replies").isEmpty();
        assertThat(replies.keySet()).as("replies only of known runs").isSubsetOf(status.keySet());
    }

    // ------------------------------------------------------------------------------------------------ figures

    private record Figures(long done, long failed, long firstCompletionMs, long firstStartedAfterKillMs,
                           long firstSubmittedAfterKillMs, long lastCompletionMs, long retriedRuns,
                           long extraAttempts, long republishedRuns, long republishes) {
    }

    private Figures figures(Instant killedAt) throws SQLException {
        Timestamp kill = Timestamp.from(killedAt);
        try (Connection c = DriverManager.getConnection(DATABASE)) {
            return new Figures(
                    scalar(c, "SELECT count(*) FROM " + schema + ".runs WHERE status = 'done'"),
                    scalar(c, "SELECT count(*) FROM " + schema + ".runs WHERE status = 'failed'"),
                    millisAfter(c, "SELECT min(finished_at) FROM " + schema + ".runs WHERE finished_at >= ?", kill),
                    millisAfter(c, "SELECT min(finished_at) FROM " + schema + ".runs WHERE started_at >= ?", kill),
                    millisAfter(c, "SELECT min(finished_at) FROM " + schema + ".runs WHERE created_at >= ?", kill),
                    millisAfter(c, "SELECT max(finished_at) FROM " + schema + ".runs WHERE finished_at >= ?", kill),
                    scalar(c, "SELECT count(*) FROM " + schema + ".runs WHERE attempts > 1"),
                    scalar(c, "SELECT coalesce(sum(attempts - 1), 0) FROM " + schema + ".runs WHERE attempts > 1"),
                    scalar(c, "SELECT count(*) FROM " + schema + ".runs WHERE republished > 0"),
                    scalar(c, "SELECT coalesce(sum(republished), 0) FROM " + schema + ".runs"));
        }
    }

    private static long scalar(Connection c, String sql) throws SQLException {
        try (ResultSet rs = c.createStatement().executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Milliseconds from the kill to the time the query returns, or -1 when it returns none. */
    private static long millisAfter(Connection c, String sql, Timestamp kill) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setTimestamp(1, kill);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                Timestamp t = rs.getTimestamp(1);
                return t == null ? -1 : t.getTime() - kill.getTime();
            }
        }
    }

    private long ended() {
        try (Connection c = DriverManager.getConnection(DATABASE)) {
            return scalar(c, "SELECT count(*) FROM " + schema + ".runs WHERE status IN ('done', 'failed')");
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) { // the table is not there yet
                return 0;
            }
            throw new IllegalStateException(e);
        }
    }

    private void failIfDied() {
        for (Child c : children) {
            if (!c.process.isAlive()) {
                throw new AssertionError(c.name + " exited with " + c.process.exitValue() + ":\n" + c.tail());
            }
        }
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    // ------------------------------------------------------------------------------------------------ load

    /**
     * Posts the runs from {@value #POSTERS} threads (the server commits concurrent submissions together), each
     * with an idempotency key of its own: a request that fails (the server busy through the failover) is sent
     * again with the same key until it is accepted, as a client would.
     */
    private static final class Submitter {
        private final int port;
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        private final ExecutorService posters = Executors.newFixedThreadPool(POSTERS);
        final Map<UUID, String> accepted = new ConcurrentHashMap<>();
        final Set<UUID> poison = ConcurrentHashMap.newKeySet();
        final AtomicInteger retries = new AtomicInteger();
        private volatile boolean stopped;

        Submitter(int port) {
            this.port = port;
        }

        Future<?> start() {
            ExecutorService driver = Executors.newSingleThreadExecutor();
            try {
                return driver.submit(() -> {
                    List<Future<?>> posted = new ArrayList<>();
                    for (int i = 0; i < RUNS; i++) {
                        int n = i;
                        posted.add(posters.submit(() -> post(n)));
                    }
                    for (Future<?> f : posted) {
                        f.get();
                    }
                    return null;
                });
            } finally {
                driver.shutdown();
            }
        }

        private Void post(int i) throws Exception {
            boolean isPoison = i % POISON_EVERY == POISON_EVERY / 2;
            String in = (isPoison ? "poison " : "load ") + i;
            String body = "{\"session_id\":\"s-" + (i % 50) + "\",\"user_id\":\"u-" + (i % 50) + "\",\"input\":\""
                    + in + "\",\"idempotency_key\":\"failover-" + i + "\"}";
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/runs"))
                    .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build();
            while (!stopped) {
                try {
                    HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() == 201 || r.statusCode() == 200) {
                        JsonNode json = Json.MAPPER.readTree(r.body());
                        UUID id = UUID.fromString(json.get("run_id").asText());
                        accepted.put(id, in);
                        if (isPoison) {
                            poison.add(id);
                        }
                        return null;
                    }
                    assertThat(r.statusCode()).as("status of a submission: %s", r.body()).isGreaterThanOrEqualTo(500);
                } catch (IOException e) {
                    // connection reset or timed out: sent again below
                }
                retries.incrementAndGet();
                Thread.sleep(200); // a client's back-off before retrying a request, not synchronisation
            }
            return null;
        }

        void stop() {
            stopped = true;
            posters.shutdownNow();
        }
    }

    // ------------------------------------------------------------------------------------------------ children

    private Child start(String name, List<String> common, String command, String... more) throws IOException {
        List<String> cmd = new ArrayList<>(Hermetic.runbus(List.of("-Xmx512m",
                "-Dorg.slf4j.simpleLogger.log.dev.runbus=info",
                "-Dorg.slf4j.simpleLogger.log.io.lettuce.core.protocol.ConnectionWatchdog=info",
                "-Dorg.slf4j.simpleLogger.log.io.lettuce.core.protocol.ReconnectionHandler=info"), command));
        cmd.addAll(common);
        cmd.addAll(List.of(more));
        Path log = Files.createDirectories(Path.of("target", "failover-logs")).resolve(schema + "-" + name + ".log");
        Process p = Hermetic.child(new ProcessBuilder(cmd)).redirectErrorStream(true).redirectOutput(log.toFile())
                .start();
        Child c = new Child(name, p, log);
        children.add(c);
        return c;
    }

    /** A serve or worker child process and its output. */
    private static final class Child {
        final String name;
        final Process process;
        final Path log;

        Child(String name, Process process, Path log) {
            this.name = name;
            this.process = process;
            this.log = log;
        }

        List<String> output() {
            try {
                return Files.readAllLines(log, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return List.of();
            }
        }

        long count(String marker) {
            return output().stream().filter(l -> l.contains(marker)).count();
        }

        String tail() {
            List<String> lines = output();
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        }

        String awaitLine(String prefix) {
            return Wait.until(name + " printing '" + prefix + "'", STARTUP, () -> {
                if (!process.isAlive()) {
                    throw new AssertionError(name + " exited with " + process.exitValue() + ":\n" + tail());
                }
                return output().stream().filter(l -> l.startsWith(prefix)).findFirst().orElse(null);
            }, l -> l != null);
        }

        int awaitPort() {
            Matcher m = Pattern.compile(":(\\d+) \\(").matcher(awaitLine("runbus serving on"));
            assertThat(m.find()).isTrue();
            return Integer.parseInt(m.group(1));
        }

    }
}
