package dev.runbus.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Starts real servers (a few seconds); skipped where no redis-server can be started. */
class LocalRedisTest {

    private static boolean redisServerInstalled() {
        String chosen = System.getenv("RUNBUS_BENCH_REDIS_SERVER");
        if (chosen != null && !chosen.isBlank()) {
            return Files.isExecutable(Path.of(chosen));
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "redis-server"))) {
                return true;
            }
        }
        return false;
    }

    @Test
    void aClusterServesEverySlotAndLeavesNothingBehind() {
        assumeTrue(redisServerInstalled(), "no redis-server to start");
        List<LocalRedis.Node> nodes;
        try (LocalRedis cluster = LocalRedis.cluster(3)) {
            nodes = cluster.nodes();
            assertThat(nodes).hasSize(3);
            assertThat(cluster.url()).startsWith("redis-cluster://127.0.0.1:").contains(",");
            for (LocalRedis.Node n : nodes) {
                String info = n.call(RedisCommands::clusterInfo);
                assertThat(info).contains("cluster_state:ok", "cluster_slots_assigned:16384");
            }
            cluster.flushAll();
        }
        for (LocalRedis.Node n : nodes) {
            assertThat(n.alive()).isFalse();
            assertThat(n.dir()).doesNotExist();
        }
    }

    @Test
    void oneNodeIsAPlainServer() {
        assumeTrue(redisServerInstalled(), "no redis-server to start");
        try (LocalRedis single = LocalRedis.single()) {
            assertThat(single.isCluster()).isFalse();
            assertThat(single.url()).isEqualTo("redis://127.0.0.1:" + single.nodes().get(0).port());
            String info = single.nodes().get(0).call(r -> r.info("cluster"));
            assertThat(info).contains("cluster_enabled:0");
        }
    }
}
