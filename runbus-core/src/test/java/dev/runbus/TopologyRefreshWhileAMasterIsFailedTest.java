package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.Partitions;
import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One master of a cluster without replicas stopped past {@code cluster-node-timeout}: the others mark it failed, its
 * slots have no master, and every read of its partitions fails at once. Each failed read asks for the topology; those
 * requests are coalesced, so the healthy masters are asked for CLUSTER NODES a few times a second at most. Before,
 * every read asked anew: about 50 refreshes a second per idle reader (one per 20 ms poll) and hundreds under load,
 * each asking every node and rebuilding the client's slot tables, and the garbage of it paused the whole process, the
 * other masters' partitions with it (the benchmark's hung-master scenario: 114 CLUSTER NODES a second on each healthy
 * master, a tenth of the time in GC).
 */
class TopologyRefreshWhileAMasterIsFailedTest {

    private static final int PARTITIONS = 6;
    private static final String TOPIC = "orders";
    private static final Duration STOP = Duration.ofSeconds(10);
    /**
     * CLUSTER NODES a healthy master may answer per second of the stop: the readers' refreshes (one per 500 ms), the
     * client's own adaptive ones (as often) and its periodic one (every 5 s), with room to spare.
     */
    private static final int MAX_TOPOLOGY_READS_PER_SECOND = 6;

    private RedisClusterProcess cluster;
    private Bus bus;

    @BeforeEach
    void startCluster() {
        cluster = RedisClusterProcess.startWithoutReplicas(3, "--cluster-node-timeout", "2000",
                "--cluster-require-full-coverage", "no");
    }

    @AfterEach
    void stop() {
        if (bus != null) {
            bus.close();
        }
        cluster.close();
    }

    @Test
    void readersOfAFailedMastersPartitionsAskForTheTopologyAFewTimesASecondAtMost() {
        bus = Bus.connect(BusConfig.builder("redis-cluster://" + cluster.seeds())
                .keyPrefix("refresh-" + UUID.randomUUID().toString().substring(0, 8)).partitions(TOPIC, PARTITIONS)
                .commandTimeout(Duration.ofSeconds(2)).build());
        List<String> handled = java.util.Collections.synchronizedList(new ArrayList<>());
        bus.subscribe(TOPIC, "unordered", "c0", d -> handled.add(d.streamId()), SubscribeOptions.defaults());
        bus.subscribe(TOPIC, "ordered", "c0", d -> { }, SubscribeOptions.builder().ordered(true).build());
        int topicMaster = cluster.masterIndexOf("{" + TOPIC + "}");
        int victim = -1;
        for (int p = 0; p < PARTITIONS && victim < 0; p++) {
            int m = cluster.masterIndexOf(new Partitions(TOPIC, PARTITIONS).name(p));
            if (m != topicMaster) {
                victim = m;
            }
        }
        String first = bus.publisher().publish(TOPIC, Message.of("t", new byte[1]));
        Wait.until("the consumer reads", Duration.ofSeconds(60), () -> handled.contains(first));

        List<RedisServerProcess> healthy = new ArrayList<>(cluster.masters());
        RedisServerProcess stopped = healthy.remove(victim);
        long before = topologyReads(healthy);
        long stoppedAt = System.nanoTime();
        stopped.pause();
        try {
            LockSupport.parkNanos(STOP.toNanos()); // the fault lasts this long
        } finally {
            stopped.resume();
        }
        double seconds = (System.nanoTime() - stoppedAt) / 1e9;
        long reads = topologyReads(healthy) - before;
        assertThat(healthy).as("a healthy master that marked the stopped one failed, or heard so")
                .anyMatch(m -> failMessages(m) > 0);

        System.out.printf("CLUSTER NODES on the %d healthy masters during a %.1f s stop: %d (%.1f per second each)%n",
                healthy.size(), seconds, reads, reads / seconds / healthy.size());
        assertThat(reads / seconds / healthy.size()).as("CLUSTER NODES per second on each healthy master")
                .isLessThanOrEqualTo(MAX_TOPOLOGY_READS_PER_SECOND);
    }

    /** The FAIL messages about a node that {@code master} sent or received (CLUSTER INFO). */
    private static long failMessages(RedisServerProcess master) {
        long n = 0;
        for (String line : RedisClusterProcess.call(master, r -> r.clusterInfo()).split("\r?\n")) {
            if (line.startsWith("cluster_stats_messages_fail_")) {
                n += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return n;
    }

    /** CLUSTER NODES calls these masters answered so far. */
    private static long topologyReads(List<RedisServerProcess> masters) {
        long n = 0;
        for (RedisServerProcess m : masters) {
            String stats = RedisClusterProcess.call(m, r -> r.info("commandstats"));
            for (String line : stats.split("\r?\n")) {
                if (line.startsWith("cmdstat_cluster|nodes:")) {
                    n += Long.parseLong(line.replaceAll("^[^:]*:calls=(\\d+),.*", "$1"));
                }
            }
        }
        return n;
    }
}
