package dev.runbus.testkit;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.MigrateArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * A Redis Cluster of a test's own: {@code masters} masters with one replica each, every node a
 * {@link RedisServerProcess} on a free loopback port with {@code --cluster-enabled yes}, joined with plain
 * cluster commands (MEET, ADDSLOTS, REPLICATE) rather than {@code redis-cli --cluster create}, so that it needs
 * nothing but a {@code redis-server} (the embedded 6.2 one too). {@link #start} returns once every node reports
 * {@code cluster_state:ok}, every slot is served and every replica is linked to its master.
 */
public final class RedisClusterProcess implements AutoCloseable {

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
    private static final int SLOTS = 16384;

    private final List<RedisServerProcess> masters = new ArrayList<>();
    private final List<RedisServerProcess> replicas = new ArrayList<>();

    private RedisClusterProcess() {
    }

    /**
     * No delay before a full sync: Redis 7 waits 5 s (repl-diskless-sync-delay) for more replicas to share one
     * transfer, which each start and each replica re-linked after a failover would otherwise wait out.
     */
    private static final String[] CLUSTER_ARGS = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
        "--cluster-node-timeout", "2000", "--repl-diskless-sync-delay", "0"};

    /** Starts {@code masters} masters and one replica of each; slots are split evenly, in order. */
    public static RedisClusterProcess start(int masters) {
        return start(masters, () -> RedisServerProcess.start(CLUSTER_ARGS));
    }

    /**
     * Like {@link #start(int)}, every node speaking TLS only (to clients, to each other and to its replica), with
     * one certificate for 127.0.0.1 signed by {@code ca}.
     */
    public static RedisClusterProcess startTls(int masters, TestCertificates ca) {
        TestCertificates.KeyPair certificate = ca.issue("IP:127.0.0.1", "DNS:localhost");
        List<String> args = new ArrayList<>(List.of(CLUSTER_ARGS));
        args.addAll(List.of("--tls-cluster", "yes", "--tls-replication", "yes"));
        return start(masters, () -> RedisServerProcess.startTls(certificate, ca.caCertificate(),
                args.toArray(new String[0])));
    }

    /**
     * Starts {@code masters} masters without replicas, with {@code extraArgs} after the cluster's own (a later
     * setting wins: {@code --cluster-node-timeout 15000}, {@code --cluster-require-full-coverage no}).
     */
    public static RedisClusterProcess startWithoutReplicas(int masters, String... extraArgs) {
        List<String> args = new ArrayList<>(List.of(CLUSTER_ARGS));
        args.addAll(List.of(extraArgs));
        return start(masters, 0, () -> RedisServerProcess.start(args.toArray(new String[0])));
    }

    private static RedisClusterProcess start(int masters, java.util.function.Supplier<RedisServerProcess> newNode) {
        return start(masters, masters, newNode);
    }

    private static RedisClusterProcess start(int masters, int replicas,
                                             java.util.function.Supplier<RedisServerProcess> newNode) {
        RedisClusterProcess cluster = new RedisClusterProcess();
        try {
            for (int i = 0; i < masters + replicas; i++) {
                RedisServerProcess node = newNode.get();
                (i < masters ? cluster.masters : cluster.replicas).add(node);
            }
            cluster.join();
            return cluster;
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    private void join() {
        List<RedisServerProcess> all = nodes();
        // A distinct config epoch per node before they meet, as redis-cli --cluster create does. Left to the
        // cluster, equal epochs are told apart by collisions resolved over gossip after the start, and a replica
        // that takes over (CLUSTER FAILOVER TAKEOVER, which bumps its epoch without agreement) before it has heard
        // of its master's resolved epoch can claim the slots with an epoch equal to the master's: every other node
        // then keeps the dead master as owner and the slots are never served again.
        for (int i = 0; i < all.size(); i++) {
            long epoch = i + 1;
            call(all.get(i), redis -> redis.clusterSetConfigEpoch(epoch));
        }
        call(all.get(0), redis -> {
            all.subList(1, all.size()).forEach(n -> redis.clusterMeet("127.0.0.1", n.port()));
            return null;
        });
        for (int i = 0; i < masters.size(); i++) {
            int from = i * SLOTS / masters.size();
            int to = (i + 1) * SLOTS / masters.size();
            int[] slots = new int[to - from];
            for (int s = from; s < to; s++) {
                slots[s - from] = s;
            }
            call(masters.get(i), redis -> redis.clusterAddSlots(slots));
        }
        Wait.until("every node knows the " + all.size() + " nodes", READY_TIMEOUT, () -> all.stream()
                .allMatch(n -> call(n, redis -> redis.clusterNodes().lines().count()) == all.size()));
        for (int i = 0; i < replicas.size(); i++) {
            String masterId = call(masters.get(i), RedisCommands::clusterMyId);
            call(replicas.get(i), redis -> redis.clusterReplicate(masterId));
        }
        String epoch = "cluster_current_epoch:" + all.size();
        Wait.until("cluster_state:ok and the highest epoch known on every node, every replica linked", READY_TIMEOUT,
                () -> all.stream().allMatch(n -> {
                    String info = call(n, RedisCommands::clusterInfo);
                    return info.contains("cluster_state:ok") && info.lines().map(String::strip).anyMatch(epoch::equals);
                })
                        && replicas.stream().allMatch(r -> call(r, redis -> redis.info("replication"))
                        .contains("master_link_status:up")));
        // A client reads its first topology from any node: every node must name an owner for every slot, or a
        // client that asked the wrong one at the wrong moment has no connection for a slot; and every node must
        // know each replica as one, or a client that loads the function library on every master also sends it to a
        // replica (READONLY).
        Wait.until("every node names an owner for every slot and knows every replica as one", READY_TIMEOUT,
                () -> all.stream().allMatch(n -> call(n, redis -> coveredSlots(redis.clusterSlots()) == SLOTS
                        && redis.clusterNodes().lines().filter(l -> l.split(" ")[2].contains("slave")).count()
                        == replicas.size())));
    }

    private static int coveredSlots(List<Object> ranges) {
        int covered = 0;
        for (Object range : ranges) {
            List<?> r = (List<?>) range;
            covered += (int) (((Number) r.get(1)).longValue() - ((Number) r.get(0)).longValue() + 1);
        }
        return covered;
    }

    /** The masters, in slot order: master {@code i} serves the {@code i}-th equal share of the slots. */
    public List<RedisServerProcess> masters() {
        return List.copyOf(masters);
    }

    /** The index in {@link #masters} of the master that serves {@code slot}, as the cluster was started. */
    public int masterIndexOf(int slot) {
        for (int i = 0; i < masters.size(); i++) {
            if (slot < (i + 1) * SLOTS / masters.size()) { // the shares of start(): [i * SLOTS / n, (i + 1) * SLOTS / n)
                return i;
            }
        }
        throw new IllegalArgumentException("no slot " + slot);
    }

    /** The index in {@link #masters} of the master that serves {@code key}'s slot. */
    public int masterIndexOf(String key) {
        return masterIndexOf(SlotHash.getSlot(key));
    }

    /** The replica of master {@code i}. */
    public RedisServerProcess replicaOf(int i) {
        return replicas.get(i);
    }

    public List<RedisServerProcess> nodes() {
        List<RedisServerProcess> all = new ArrayList<>(masters);
        all.addAll(replicas);
        return all;
    }

    /** Every node as {@code 127.0.0.1:port}, comma-separated: seeds for a cluster client. */
    public String seeds() {
        return nodes().stream().map(n -> "127.0.0.1:" + n.port()).collect(Collectors.joining(","));
    }

    /** The first steps of {@code redis-cli --cluster reshard} for one slot: the target imports it, the source migrates it. */
    public void beginSlotMigration(int slot, RedisServerProcess source, RedisServerProcess target) {
        String sourceId = call(source, RedisCommands::clusterMyId);
        String targetId = call(target, RedisCommands::clusterMyId);
        call(target, r -> r.clusterSetSlotImporting(slot, sourceId));
        call(source, r -> r.clusterSetSlotMigrating(slot, targetId));
    }

    /** The rest of {@code redis-cli --cluster reshard}: the slot's keys sent over, the slot given to the target. */
    public void finishSlotMigration(int slot, RedisServerProcess source, RedisServerProcess target) {
        String targetId = call(target, RedisCommands::clusterMyId);
        call(source, r -> {
            List<String> keys;
            while (!(keys = r.clusterGetKeysInSlot(slot, 1000)).isEmpty()) {
                r.migrate("127.0.0.1", target.port(), 0, 5000, MigrateArgs.Builder.keys(keys));
            }
            return null;
        });
        // The target first, then the source, then the rest, as redis-cli does: a source that gave the slot away
        // while the target still only imports it sends a redirected command back and forth until the client's
        // redirect limit ends it with MOVED.
        List<RedisServerProcess> order = new ArrayList<>(List.of(target, source));
        masters.stream().filter(m -> m != target && m != source).forEach(order::add);
        for (RedisServerProcess m : order) {
            call(m, r -> r.clusterSetSlotNode(slot, targetId));
        }
    }

    /** Runs commands on one node over a connection of its own. */
    public static <T> T call(RedisServerProcess node, java.util.function.Function<RedisCommands<String, String>, T> f) {
        RedisClient client = RedisClient.create(node.uri());
        if (node.caCertificate() != null) {
            client.setOptions(io.lettuce.core.ClientOptions.builder().sslOptions(io.lettuce.core.SslOptions.builder()
                    .jdkSslProvider().trustManager(node.caCertificate().toFile()).build()).build());
        }
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            return f.apply(c.sync());
        } finally {
            shutdown(client);
        }
    }

    /**
     * Shuts a short-lived client down, waiting at most 10 s: Lettuce's own {@code shutdown} waits for its event loops
     * without a bound, and once held a test's setUp for its whole 3-minute timeout. A client still shutting down
     * then is left to finish on its own.
     */
    public static void shutdown(AbstractRedisClient client) {
        try {
            client.shutdownAsync(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            System.err.println("a test's Redis client did not shut down within 10 s; left to finish: " + e);
        }
    }

    @Override
    public void close() {
        nodes().forEach(RedisServerProcess::close);
    }
}
