package dev.runbus.testkit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A master, its replica and three Sentinels of a test's own, on free loopback ports: the master set is named
 * {@value #MASTER_NAME}, a quorum of two, a master judged down after one second unless told otherwise.
 * {@link #start} returns once every Sentinel names the master and knows the replica, and the replica is linked.
 */
public final class RedisSentinelProcess implements AutoCloseable {

    public static final String MASTER_NAME = "runbus";
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

    private final RedisServerProcess master;
    private final RedisServerProcess replica;
    private final List<RedisServerProcess> sentinels = new ArrayList<>();
    private final List<Path> configs = new ArrayList<>();

    private RedisSentinelProcess(RedisServerProcess master, RedisServerProcess replica) {
        this.master = master;
        this.replica = replica;
    }

    public static RedisSentinelProcess start() {
        return start(Duration.ofSeconds(1));
    }

    /**
     * A set whose Sentinels judge the master down after {@code downAfter} without an answer. The sets of failover
     * tests take a second, so that a killed master is replaced quickly; a set shared by tests that do not test
     * failover takes much longer, since on a busy machine a Sentinel that got no answer for a second would fail over
     * a master that is alive, and the replica, behind by what was not yet replicated, would lose acknowledged writes
     * (Redis replicates asynchronously) under tests that do not expect it.
     */
    public static RedisSentinelProcess start(Duration downAfter) {
        // No 5 s wait for more replicas before a full sync (repl-diskless-sync-delay), on either side of a failover.
        RedisServerProcess master = RedisServerProcess.start("--repl-diskless-sync-delay", "0");
        RedisSentinelProcess set = null;
        try {
            RedisServerProcess replica = RedisServerProcess.start("--repl-diskless-sync-delay", "0", "--replicaof",
                    "127.0.0.1", String.valueOf(master.port()));
            set = new RedisSentinelProcess(master, replica);
            for (int i = 0; i < 3; i++) {
                set.sentinels.add(set.startSentinel(downAfter));
            }
            set.awaitReady();
            return set;
        } catch (RuntimeException | IOException e) {
            if (set != null) {
                set.close();
            } else {
                master.close();
            }
            throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
        }
    }

    /** A Sentinel reads and rewrites its configuration file, so each gets one of its own. */
    private RedisServerProcess startSentinel(Duration downAfter) throws IOException {
        Path config = Files.createTempFile("runbus-test-sentinel-", ".conf");
        configs.add(config);
        Files.writeString(config, String.join("\n",
                "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + master.port() + " 2",
                "sentinel down-after-milliseconds " + MASTER_NAME + " " + downAfter.toMillis(),
                "sentinel failover-timeout " + MASTER_NAME + " 5000",
                "sentinel parallel-syncs " + MASTER_NAME + " 1", ""));
        return RedisServerProcess.startWith(config.toString(), "--sentinel");
    }

    private void awaitReady() {
        Wait.until("the replica linked to the master", READY_TIMEOUT, () -> RedisClusterProcess.call(replica,
                redis -> redis.info("replication")).contains("master_link_status:up"));
        Wait.until("every Sentinel naming the master and knowing the replica and the other Sentinels", READY_TIMEOUT,
                () -> sentinels.stream().allMatch(s -> sentinel(s, c -> {
                    SocketAddress addr = c.sync().getMasterAddrByName(MASTER_NAME);
                    return addr != null && addr.toString().endsWith(":" + master.port())
                            && c.sync().replicas(MASTER_NAME).size() == 1
                            && "2".equals(c.sync().master(MASTER_NAME).get("num-other-sentinels"));
                })));
    }

    /** The Sentinels as {@code 127.0.0.1:port}, comma-separated. */
    public String sentinelAddresses() {
        return sentinels.stream().map(s -> "127.0.0.1:" + s.port()).collect(Collectors.joining(","));
    }

    public List<RedisServerProcess> sentinels() {
        return List.copyOf(sentinels);
    }

    public RedisServerProcess master() {
        return master;
    }

    public RedisServerProcess replica() {
        return replica;
    }

    /** The master's port as the first Sentinel names it now. */
    public int currentMasterPort() {
        return sentinel(sentinels.get(0), c -> {
            String addr = String.valueOf(c.sync().getMasterAddrByName(MASTER_NAME));
            return Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
        });
    }

    /** Runs commands on one Sentinel over a connection of its own. */
    public static <T> T sentinel(RedisServerProcess node,
                                 java.util.function.Function<StatefulRedisSentinelConnection<String, String>, T> f) {
        RedisClient client = RedisClient.create(node.uri());
        try (StatefulRedisSentinelConnection<String, String> c = client.connectSentinel()) {
            return f.apply(c);
        } finally {
            RedisClusterProcess.shutdown(client);
        }
    }

    @Override
    public void close() {
        sentinels.forEach(RedisServerProcess::close);
        replica.close();
        master.close();
        for (Path config : configs) {
            try {
                Files.deleteIfExists(config);
            } catch (IOException ignored) {
                // a temporary file left behind
            }
        }
    }
}
