package dev.runbus.testkit;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real Redis server the behaviour suite runs against: the local Redis 7 (or RUNBUS_TEST_REDIS_URL), an
 * embedded Redis 6.2 started once per test JVM, so that both XAUTOCLAIM reply shapes are exercised, and a local
 * Redis Cluster of 3 masters and 3 replicas ({@link #cluster()}). Its {@link #redis()} commands reach any of
 * them (on the cluster, each goes to its key's master).
 */
public final class RedisTarget {

    private static volatile RedisTarget redis62;
    private static volatile RedisTarget cluster;
    private static volatile RedisClusterProcess clusterProcess;
    private static volatile RedisTarget sentinel;
    private static volatile RedisSentinelProcess sentinelProcess;

    private final String name;
    private final String uri;
    private final AbstractRedisClient client;
    private final RedisClusterCommands<String, String> commands;

    private RedisTarget(String name, String uri) {
        this.name = name;
        this.uri = uri;
        if (uri.startsWith("redis-cluster://")) {
            java.util.List<RedisURI> seeds = new ArrayList<>();
            for (String host : uri.substring("redis-cluster://".length()).split(",")) {
                seeds.add(RedisURI.create("redis://" + host));
            }
            RedisClusterClient c = RedisClusterClient.create(seeds);
            this.client = c;
            this.commands = c.connect().sync();
        } else {
            RedisClient c = RedisClient.create(uri);
            this.client = c;
            this.commands = c.connect().sync();
        }
    }

    /**
     * The Redis server of the machine (started by .ci/run when it is not answering), or, when nothing answers
     * at the test URL, a private one: see {@link TestServers#redisUri()}.
     */
    public static RedisTarget local() {
        return Holder.LOCAL;
    }

    /** An embedded Redis 6.2, started on a free port on first use and stopped when the JVM exits. */
    public static synchronized RedisTarget embedded62() {
        if (redis62 == null) {
            RedisServerProcess server = RedisServerProcess.startEmbedded62();
            Runtime.getRuntime().addShutdownHook(new Thread(server::close));
            redis62 = new RedisTarget("redis-6.2-embedded", server.uri());
        }
        return redis62;
    }

    /**
     * A Redis Cluster of 3 masters, each with a replica, started on first use and stopped when the JVM exits;
     * {@link #clusterProcess()} gives its nodes, for tests that kill or reshard them.
     */
    public static synchronized RedisTarget cluster() {
        if (cluster == null) {
            clusterProcess = RedisClusterProcess.start(3);
            Runtime.getRuntime().addShutdownHook(new Thread(clusterProcess::close));
            cluster = new RedisTarget("redis-cluster", "redis-cluster://" + clusterProcess.seeds());
        }
        return cluster;
    }

    /**
     * A master with a replica and 3 Sentinels, reached through {@code redis-sentinel://…#runbus}, started on first
     * use and stopped when the JVM exits.
     */
    public static synchronized RedisTarget sentinel() {
        if (sentinel == null) {
            // Shared by tests that do not test failover: no failover of a master that is merely slow to answer.
            sentinelProcess = RedisSentinelProcess.start(Duration.ofMinutes(1));
            Runtime.getRuntime().addShutdownHook(new Thread(sentinelProcess::close));
            sentinel = new RedisTarget("redis-sentinel", "redis-sentinel://" + sentinelProcess.sentinelAddresses()
                    + "#" + RedisSentinelProcess.MASTER_NAME);
        }
        return sentinel;
    }

    public static synchronized RedisClusterProcess clusterProcess() {
        cluster();
        return clusterProcess;
    }

    /**
     * The server that holds {@code key}: the target itself, the Sentinels' master, or on the cluster the master
     * of the key's slot.
     */
    public RedisURI serverOf(String key) {
        if (client instanceof RedisClusterClient c) {
            return c.getPartitions().getMasterBySlot(io.lettuce.core.cluster.SlotHash.getSlot(key)).getUri();
        }
        if (this == sentinel) {
            return RedisURI.create("redis://127.0.0.1:" + sentinelProcess.currentMasterPort());
        }
        return RedisURI.create(uri);
    }

    public boolean isCluster() {
        return uri.startsWith("redis-cluster://");
    }

    public String name() {
        return name;
    }

    public String uri() {
        return uri;
    }

    /** Raw commands, for seeding and inspecting state the way a test needs to. */
    public RedisClusterCommands<String, String> redis() {
        return commands;
    }

    public String version() {
        for (String line : redis().info("server").split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                return line.substring("redis_version:".length()).trim();
            }
        }
        return "?";
    }

    /** Deletes every key under a prefix. */
    public void deleteKeys(String prefix) {
        List<String> found = new ArrayList<>();
        ScanIterator<String> it = ScanIterator.scan(redis(), ScanArgs.Builder.matches(prefix + ":*").limit(500));
        while (it.hasNext()) {
            found.add(it.next());
        }
        if (!found.isEmpty()) {
            redis().del(found.toArray(new String[0]));
        }
    }

    private static final class Holder {
        static final RedisTarget LOCAL = new RedisTarget("redis-local", TestServers.redisUri());
    }
}
