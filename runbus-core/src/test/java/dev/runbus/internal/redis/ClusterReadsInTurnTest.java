package dev.runbus.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.RedisTarget;
import io.lettuce.core.Consumer;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * On a cluster the partitions of a topic are read one after the other (ClusterStreamReader). What one partition's read
 * delivered is handed on before the next partition is read: delivered, an entry is pending under the consumer and its
 * idle time runs, and until the consumer holds it nothing keeps it alive, so entries kept back while the reader waits
 * for other masters (up to 200 ms each, more on a busy host) could pass {@code minIdle} and be claimed and run twice.
 */
class ClusterReadsInTurnTest {

    private static final Consumer<String> C1 = Consumer.from("g", "c1");

    private final RedisTarget cluster = RedisTarget.cluster();
    private final RedisClusterCommands<String, String> redis = cluster.redis();
    private final String prefix = "test-reads-in-turn-" + UUID.randomUUID();
    private final List<String> streams = new ArrayList<>();
    private RedisLink link;
    private StreamReader reader;

    @BeforeEach
    void open() {
        Keys keys = new Keys(prefix);
        Partitions partitions = new Partitions("t", 4);
        for (String name : partitions.names()) {
            String stream = keys.stream(name);
            redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g", XGroupCreateArgs.Builder.mkstream(true));
            streams.add(stream);
        }
        link = RedisLink.open(cluster.uri(), Duration.ofSeconds(5));
        reader = link.openReader(Duration.ofSeconds(5));
    }

    @AfterEach
    void close() {
        reader.close();
        link.close();
        cluster.deleteKeys(prefix);
    }

    @Test
    void eachReadHandsOnOnePartitionsEntriesBeforeTheNextPartitionIsRead() {
        List<String> first = add(0, 2);
        List<String> second = add(1, 2);

        assertThat(ids(read())).as("the first read").containsExactlyElementsOf(first);
        assertThat(redis.xpending(streams.get(1), "g").getCount())
                .as("entries of partition 1 delivered and kept back").isZero();
        assertThat(ids(read())).as("the second read").containsExactlyElementsOf(second);

        // The turn goes on after the partition read last, so every partition gets its turn.
        List<String> third = add(3, 1);
        List<String> fourth = add(0, 1);
        assertThat(ids(read())).as("the third read").containsExactlyElementsOf(third);
        assertThat(ids(read())).as("the fourth read").containsExactlyElementsOf(fourth);
    }

    private List<StreamMessage<String, byte[]>> read() {
        return reader.readGroup(C1, 100, Duration.ofSeconds(5), streams);
    }

    /** Adds {@code n} entries to a partition; returns them as stream/id. */
    private List<String> add(int partition, int n) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(streams.get(partition) + "/" + redis.xadd(streams.get(partition), "type", "x", "payload", "p" + i));
        }
        return ids;
    }

    private static List<String> ids(List<StreamMessage<String, byte[]>> read) {
        return read.stream().map(m -> m.getStream() + "/" + m.getId()).toList();
    }
}
