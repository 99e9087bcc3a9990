package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.testkit.RedisTarget;
import io.lettuce.core.RedisURI;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A topic's partitions on a Redis Cluster of 3 masters (evenly split slots) spread over every master. */
class PartitionSpreadOnClusterTest {

    @Test
    void partitionsSpreadOverEveryMaster() {
        RedisTarget cluster = RedisTarget.cluster();
        for (String name : new String[] {"orders", "runs", "payments-eu", "日本"}) {
            for (int n : new int[] {3, 4, 6, 7, 16}) {
                Map<String, Integer> perMaster = new HashMap<>();
                for (int p = 0; p < n; p++) {
                    RedisURI master = cluster.serverOf(new Keys("rbpart").stream(new Partitions(name, n).name(p)));
                    perMaster.merge(master.getHost() + ":" + master.getPort(), 1, Integer::sum);
                }
                assertThat(perMaster).as("partitions of %s (%d) per master", name, n).hasSize(3);
                // Evenly spaced slots over three even ranges: no master holds more than its share, rounded up.
                assertThat(perMaster.values()).allMatch(c -> c >= n / 3 && c <= (n + 2) / 3);
            }
        }
    }
}
