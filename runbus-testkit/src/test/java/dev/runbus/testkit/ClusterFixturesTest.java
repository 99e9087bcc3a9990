package dev.runbus.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The multi-node fixtures work: a cluster of 3 masters and 3 replicas that serves every slot, and a master,
 * replica and 3 Sentinels that promote the replica when the master dies. Start times are printed.
 */
class ClusterFixturesTest {

    @Test
    void aClusterOfThreeMastersAndThreeReplicasServesEverySlot() {
        long start = System.nanoTime();
        try (RedisClusterProcess cluster = RedisClusterProcess.start(3)) {
            System.out.printf("cluster of 6 nodes ready in %d ms%n", (System.nanoTime() - start) / 1_000_000);
            for (RedisServerProcess node : cluster.nodes()) {
                String info = RedisClusterProcess.call(node, RedisCommands::clusterInfo);
                assertThat(info).contains("cluster_state:ok", "cluster_slots_assigned:16384",
                        "cluster_known_nodes:6", "cluster_size:3");
            }
            for (int i = 0; i < 3; i++) {
                String replication = RedisClusterProcess.call(cluster.replicaOf(i), redis -> redis.info("replication"));
                assertThat(replication).contains("role:slave", "master_port:" + cluster.masters().get(i).port());
            }
            assertThat(cluster.seeds().split(",")).hasSize(6);
        }
    }

    @Test
    void sentinelsPromoteTheReplicaWhenTheMasterDies() {
        long start = System.nanoTime();
        try (RedisSentinelProcess set = RedisSentinelProcess.start()) {
            System.out.printf("master, replica and 3 Sentinels ready in %d ms%n",
                    (System.nanoTime() - start) / 1_000_000);
            assertThat(set.currentMasterPort()).isEqualTo(set.master().port());
            long killed = System.nanoTime();
            set.master().close();
            Wait.until("the replica promoted", Duration.ofSeconds(30),
                    () -> set.currentMasterPort() == set.replica().port());
            String replication = RedisClusterProcess.call(set.replica(), redis -> redis.info("replication"));
            assertThat(replication).contains("role:master");
            System.out.printf("failover %d ms after the master was killed%n", (System.nanoTime() - killed) / 1_000_000);
        }
    }
}
