package dev.runbus.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Redis servers of the benchmark's own, so that a scenario can compare deployments side by side: one node, or a
 * Redis Cluster of {@code masters} masters without replicas. Each node is a {@code redis-server} process on a
 * free loopback port with a temporary folder of its own, keeping nothing on disk; a cluster is joined with
 * CLUSTER MEET and ADDSLOTS (each master an equal share of the slots, in order) and ready once every node
 * reports {@code cluster_state:ok}.
 *
 * <p>The binary is {@code $RUNBUS_BENCH_REDIS_SERVER} when set, else {@code redis-server} on the PATH.
 * {@link #close} kills every process and removes the folders; a shutdown hook does the same if the JVM exits
 * first (an interrupted run), so no server outlives the benchmark.
 */
final class LocalRedis implements AutoCloseable {

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
    private static final int SLOTS = 16384;
    /** The cluster's {@code cluster-node-timeout}: how long a master may not answer before the others mark it failed. */
    static final long NODE_TIMEOUT_MILLIS = 5000;

    /** One redis-server process, and the benchmark's own connection to it once it answers. */
    static final class Node {
        private final int port;
        private final Process process;
        private final Path dir;
        private StatefulRedisConnection<String, String> connection;

        private Node(int port, Process process, Path dir) {
            this.port = port;
            this.process = process;
            this.dir = dir;
        }

        int port() {
            return port;
        }

        String uri() {
            return "redis://127.0.0.1:" + port;
        }

        boolean alive() {
            return process.isAlive();
        }

        Path dir() {
            return dir;
        }

        /** Stops the process (SIGSTOP): its connections stay open, its commands get no answer until {@link #resume}. */
        void pause() {
            signal("STOP");
        }

        void resume() {
            signal("CONT");
        }

        private void signal(String name) {
            try {
                Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
                if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                    throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot signal the redis-server on port " + port, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while signalling the redis-server on port " + port, e);
            }
        }

        /** Runs commands on this node over the benchmark's own connection to it (Redis counts them like any other). */
        synchronized <T> T call(Function<RedisCommands<String, String>, T> f) {
            return f.apply(connection.sync());
        }
    }

    private final boolean cluster;
    private final List<Node> nodes = new ArrayList<>();
    private final RedisClient client = RedisClient.create();
    private final Thread hook = new Thread(this::stop, "runbus-bench-redis-stop");

    private LocalRedis(boolean cluster) {
        this.cluster = cluster;
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** One node, started like a cluster's nodes but without cluster mode. */
    static LocalRedis single() {
        LocalRedis redis = new LocalRedis(false);
        try {
            redis.nodes.add(redis.launch());
            return redis;
        } catch (RuntimeException e) {
            redis.close();
            throw e;
        }
    }

    /** A cluster of {@code masters} masters, no replicas, every slot served. */
    static LocalRedis cluster(int masters) {
        return cluster(masters, new String[0]);
    }

    /** {@link #cluster(int)} with more {@code redis-server} arguments for every node. */
    static LocalRedis cluster(int masters, String... extra) {
        LocalRedis redis = new LocalRedis(true);
        try {
            for (int i = 0; i < masters; i++) {
                List<String> args = new ArrayList<>(List.of("--cluster-enabled", "yes", "--cluster-config-file",
                        "nodes.conf", "--cluster-node-timeout", Long.toString(NODE_TIMEOUT_MILLIS)));
                args.addAll(List.of(extra));
                redis.nodes.add(redis.launch(args.toArray(new String[0])));
            }
            redis.join();
            return redis;
        } catch (RuntimeException e) {
            redis.close();
            throw e;
        }
    }

    boolean isCluster() {
        return cluster;
    }

    List<Node> nodes() {
        return List.copyOf(nodes);
    }

    /** The URL runbus connects with: {@code redis://…} or {@code redis-cluster://host:port,…}. */
    String url() {
        if (!cluster) {
            return nodes.get(0).uri();
        }
        return "redis-cluster://" + nodes.stream().map(n -> "127.0.0.1:" + n.port()).collect(Collectors.joining(","));
    }

    /** The ports, for progress lines. */
    String ports() {
        return nodes.stream().map(n -> Integer.toString(n.port())).collect(Collectors.joining(", "));
    }

    private void join() {
        nodes.get(0).call(redis -> {
            nodes.subList(1, nodes.size()).forEach(n -> redis.clusterMeet("127.0.0.1", n.port()));
            return null;
        });
        for (int i = 0; i < nodes.size(); i++) {
            int from = i * SLOTS / nodes.size();
            int to = (i + 1) * SLOTS / nodes.size();
            int[] slots = new int[to - from];
            for (int s = from; s < to; s++) {
                slots[s - from] = s;
            }
            nodes.get(i).call(redis -> redis.clusterAddSlots(slots));
        }
        awaitHealthy();
    }

    /**
     * Waits until every node reports {@code cluster_state:ok}, knows every other node and flags none of them as failing
     * (after a master stopped past the node timeout, until the others clear its FAIL flag).
     */
    void awaitHealthy() {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (!nodes.stream().allMatch(n -> n.call(RedisCommands::clusterInfo).contains("cluster_state:ok")
                && healthyView(n.call(RedisCommands::clusterNodes)))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the local cluster on ports " + ports() + " did not reach"
                        + " cluster_state:ok with every node healthy within " + READY_TIMEOUT.toSeconds() + " s");
            }
            Env.sleep(50);
        }
    }

    private boolean healthyView(String clusterNodes) {
        return clusterNodes.lines().count() == nodes.size()
                && clusterNodes.lines().noneMatch(l -> l.contains("fail") || l.contains("handshake"));
    }

    /** The index in {@link #nodes} of the master that serves {@code key}: master {@code i} serves the {@code i}-th share of the slots. */
    int masterIndexOf(String key) {
        return SlotHash.getSlot(key) * nodes.size() / SLOTS;
    }

    /** Deletes every key on every node (they are the benchmark's own servers). */
    void flushAll() {
        nodes.forEach(n -> n.call(RedisCommands::flushall));
    }

    private Node launch(String... extra) {
        Path dir;
        try {
            dir = Files.createTempDirectory("runbus-bench-redis-");
        } catch (IOException e) {
            throw new IllegalStateException("cannot create a folder for a redis-server", e);
        }
        int port = freePort();
        List<String> cmd = new ArrayList<>(List.of(binary(), "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir.toString(),
                "--logfile", dir.resolve("redis.log").toString()));
        cmd.addAll(List.of(extra));
        Process process;
        try {
            process = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            delete(dir);
            throw new IllegalStateException("cannot start " + cmd.get(0) + " (set RUNBUS_BENCH_REDIS_SERVER to a"
                    + " redis-server binary)", e);
        }
        Node node = new Node(port, process, dir);
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (true) {
            try {
                node.connection = client.connect(RedisURI.create(node.uri()));
                return node;
            } catch (RuntimeException notYet) {
                // still starting
            }
            if (!process.isAlive() || System.nanoTime() > deadline) {
                String log = readLog(dir);
                kill(node);
                throw new IllegalStateException("redis-server on port " + port + " did not start: " + log);
            }
            Env.sleep(20);
        }
    }

    private static String binary() {
        String chosen = System.getenv("RUNBUS_BENCH_REDIS_SERVER");
        return chosen == null || chosen.isBlank() ? "redis-server" : chosen;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String readLog(Path dir) {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("redis.log"));
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 3), lines.size()));
        } catch (IOException e) {
            return "no log";
        }
    }

    private static void kill(Node node) {
        if (node.connection != null) {
            node.connection.closeAsync();
        }
        node.process.destroyForcibly();
        try {
            node.process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        delete(node.dir);
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException ignored) {
            // a temporary folder left behind
        }
    }

    private synchronized void stop() {
        nodes.forEach(LocalRedis::kill);
        nodes.clear();
    }

    /** Kills every node (nothing is saved) and removes their folders. */
    @Override
    public void close() {
        stop();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or has run
        }
    }
}
