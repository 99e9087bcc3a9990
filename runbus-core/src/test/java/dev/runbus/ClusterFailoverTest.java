package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.Partitions;
import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.Wait;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The master that holds a topic dies (SIGKILL) and its replica takes over ({@code CLUSTER FAILOVER TAKEOVER}):
 * the bus's consumers, blocked on the dead master, find the new one and go on; messages published after the
 * promotion are all handled. Messages published before may be lost or handled again (asynchronous replication:
 * docs/architecture.md), so the test asserts on those after it.
 */
class ClusterFailoverTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private RedisClusterProcess cluster;

    @BeforeEach
    void startCluster() {
        cluster = RedisClusterProcess.start(3);
    }

    @AfterEach
    void stopCluster() {
        cluster.close();
    }

    @Test
    void plainTopic_consumersGoOnOnThePromotedReplica() {
        failover(1);
    }

    @Test
    void partitionedTopic_consumersGoOnOnThePromotedReplica() {
        failover(3);
    }

    private void failover(int partitions) {
        String prefix = "failover-" + UUID.randomUUID().toString().substring(0, 8);
        String topic = "orders";
        Set<String> handled = ConcurrentHashMap.newKeySet();
        List<String> loopErrors = new CopyOnWriteArrayList<>();
        BusConfig config = BusConfig.builder("redis-cluster://" + cluster.seeds()).keyPrefix(prefix)
                .partitions(topic, partitions).commandTimeout(Duration.ofSeconds(5)).listener(new BusListener() {
                    @Override
                    public void onLoopError(String loop, Throwable error) {
                        loopErrors.add(loop);
                    }
                }).build();
        List<Bus> buses = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                Bus bus = Bus.connect(config);
                buses.add(bus);
                bus.subscribe(topic, "g", "c" + i, d -> handled.add(new String(d.message().payload(),
                        StandardCharsets.UTF_8)), SubscribeOptions.builder().blockTime(Duration.ofSeconds(2))
                        .minIdle(Duration.ofSeconds(3)).claimInterval(Duration.ofMillis(500)).build());
            }
            Bus producer = buses.get(0);
            publish(producer, topic, "before-", 200);
            Wait.until("the first 200 handled", WAIT, () -> handled.size() == 200);

            int slot = SlotHash.getSlot(new Partitions(topic, partitions).name(0));
            int victim = masterIndexOf(slot);
            RedisServerProcess replica = cluster.replicaOf(victim);
            long killedAt = System.nanoTime();
            cluster.masters().get(victim).close(); // SIGKILL
            RedisClusterProcess.call(replica, r -> r.clusterFailover(false, true)); // TAKEOVER: the master is dead
            Wait.until("the replica promoted", WAIT, () -> RedisClusterProcess.call(replica,
                    r -> r.info("replication")).contains("role:master"));

            publish(producer, topic, "after-", 200);
            Wait.until("every message published after the promotion handled", WAIT, () -> {
                for (int i = 0; i < 200; i++) {
                    if (!handled.contains("after-" + i)) {
                        return false;
                    }
                }
                return true;
            });
            System.out.printf("cluster failover (%d partition%s): all 200 later messages handled %.1f s after the "
                    + "kill; %d loop errors reported%n", partitions, partitions == 1 ? "" : "s",
                    (System.nanoTime() - killedAt) / 1e9, loopErrors.size());
            if (partitions == 1) {
                // The topic's one read is blocked on the killed master nearly all the time: its loss is reported, not
                // hidden. A partitioned topic's partitions are read one after the other, on three masters, so at
                // the kill its read may be on another master, and the next read of the victim's partition goes to
                // the promoted replica without an error to report.
                assertThat(loopErrors).isNotEmpty();
            }
        } finally {
            buses.forEach(Bus::close);
        }
    }

    /** Publishes one by one, each retried while the cluster fails over (the publisher gets the error). */
    private static void publish(Bus bus, String topic, String prefix, int n) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        for (int i = 0; i < n; i++) {
            Message m = Message.builder("t", (prefix + i).getBytes(StandardCharsets.UTF_8)).key("k" + i).build();
            while (true) {
                try {
                    bus.publisher().publish(topic, m);
                    break;
                } catch (RunbusException e) {
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                }
            }
        }
    }

    private int masterIndexOf(int slot) {
        List<RedisServerProcess> masters = cluster.masters();
        for (int i = 0; i < masters.size(); i++) {
            if (slot >= i * 16384 / masters.size() && slot < (i + 1) * 16384 / masters.size()) {
                return i;
            }
        }
        throw new IllegalStateException("slot " + slot);
    }
}
