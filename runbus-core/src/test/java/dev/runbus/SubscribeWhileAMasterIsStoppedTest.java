package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.testing.PartitionKeys;
import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A consumer (re)started while one master of a cluster is stopped (SIGSTOP, no failover): it starts, and serves the
 * partitions on the other masters at once: their entries pending under its name from before the restart are re-read
 * and handled, and what is published to them is handled, while the stopped master's partitions wait. Once the master
 * answers again, its partitions join: their pending and new entries are handled too, every entry once
 * (docs/architecture.md, rule 14). Before, subscribe created the group on every partition one after the other and
 * threw when the stopped master's call timed out, and the re-read of the consumer's own pending entries retried the
 * stopped partition and read none of the others meanwhile.
 */
class SubscribeWhileAMasterIsStoppedTest {

    private static final int PARTITIONS = 6;
    private static final String TOPIC = "orders";
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Entries per partition pending under the consumer before it restarts, and published before and during the stop. */
    private static final int PENDING = 3;
    private static final int NEW = 3;

    private RedisClusterProcess cluster;
    private final List<Bus> buses = new ArrayList<>();
    private final Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
    private String prefix;
    private int victim;
    private Map<Integer, Integer> masterOf;
    private List<Integer> healthy;
    private List<Integer> stopped;
    private final Map<Integer, List<String>> keys = PartitionKeys.of(PARTITIONS, 10);
    private final Map<Integer, AtomicInteger> sequence = new ConcurrentHashMap<>();

    @BeforeEach
    void startCluster() {
        // No replica, and a node timeout longer than the test: the cluster neither fails the master over nor marks it
        // failed, so its slots just get no answer.
        cluster = RedisClusterProcess.startWithoutReplicas(3, "--cluster-node-timeout", "60000",
                "--cluster-require-full-coverage", "no");
        chooseVictim();
    }

    @AfterEach
    void stop() {
        cluster.masters().forEach(RedisServerProcess::resume);
        buses.forEach(Bus::close);
        cluster.close();
    }

    @Test
    void unordered_aConsumerStartedWhileAMasterIsStoppedServesTheOtherPartitions_andTheStoppedOnesOnceItAnswers() {
        run(SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).minIdle(Duration.ofMinutes(10)).build());
    }

    @Test
    void ordered_aConsumerStartedWhileAMasterIsStoppedServesTheOtherPartitions_andTheStoppedOnesOnceItAnswers() {
        run(SubscribeOptions.builder().ordered(true).concurrency(PARTITIONS).blockTime(Duration.ofMillis(200))
                .leaseTime(Duration.ofSeconds(3)).minIdle(Duration.ofMinutes(10)).build());
    }

    private void run(SubscribeOptions options) {
        Bus publisher = connect();
        String group = "g";
        Keys k = new Keys(prefix);
        Partitions partitions = new Partitions(TOPIC, PARTITIONS);
        for (int p = 0; p < PARTITIONS; p++) {
            String stream = k.stream(partitions.name(p));
            onMasterOf(p, r -> r.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), group,
                    XGroupCreateArgs.Builder.mkstream(true)));
        }
        // Entries the consumer read before it died, pending under its name; then new ones, read by nobody yet.
        for (int p = 0; p < PARTITIONS; p++) {
            for (int i = 0; i < PENDING; i++) {
                publish(publisher, p, "pending");
            }
            String stream = k.stream(partitions.name(p));
            List<?> read = onMasterOf(p, r -> r.xreadgroup(Consumer.from(group, "c"),
                    XReadArgs.StreamOffset.lastConsumed(stream)));
            assertThat(read).hasSize(PENDING);
            for (int i = 0; i < NEW; i++) {
                publish(publisher, p, "new");
            }
        }

        System.out.printf("stopping master %d (partitions %s; the others: %s)%n", victim, stopped, healthy);
        cluster.masters().get(victim).pause();
        Bus restarted = connect();
        restarted.subscribe(TOPIC, group, "c", d -> {
            handled.computeIfAbsent(new String(d.message().payload(), StandardCharsets.UTF_8),
                    id -> new AtomicInteger()).incrementAndGet();
        }, options);
        for (int p : healthy) {
            for (int i = 0; i < NEW; i++) {
                publish(publisher, p, "during");
            }
        }
        Wait.until("every entry of the partitions on the other masters handled while master " + victim + " is stopped",
                WAIT, () -> handled.keySet().containsAll(ids(healthy)));
        assertThat(handled.keySet()).as("nothing of the stopped master's partitions %s", stopped)
                .noneMatch(id -> stopped.contains(partitionOf(id)));

        cluster.masters().get(victim).resume();
        Wait.until("every entry handled once master " + victim + " answers again", WAIT,
                () -> handled.keySet().containsAll(ids(List.of(0, 1, 2, 3, 4, 5))));
        Map<String, Integer> twice = new TreeMap<>();
        handled.forEach((id, n) -> {
            if (n.get() > 1) {
                twice.put(id, n.get());
            }
        });
        assertThat(twice).as("entries handled more than once").isEmpty();
    }

    /**
     * A prefix and a victim master that holds some partitions but neither the topic's own keys (its partition count
     * and heartbeats) nor the topic list: those a subscribe needs, and they are not what this test is about.
     */
    private void chooseVictim() {
        Partitions partitions = new Partitions(TOPIC, PARTITIONS);
        while (true) {
            prefix = "stopped-" + UUID.randomUUID().toString().substring(0, 8);
            masterOf = new TreeMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                masterOf.put(p, cluster.masterIndexOf(SlotHash.getSlot(new Keys(prefix).stream(partitions.name(p)))));
            }
            Set<Integer> busy = Set.copyOf(List.of(cluster.masterIndexOf(SlotHash.getSlot(new Keys(prefix).partitionCount(TOPIC))),
                    cluster.masterIndexOf(SlotHash.getSlot(new Keys(prefix).topics()))));
            for (int m = 0; m < cluster.masters().size(); m++) {
                int master = m;
                if (!busy.contains(m) && masterOf.containsValue(m) && masterOf.values().stream().anyMatch(x -> x != master)) {
                    victim = m;
                    healthy = masterOf.keySet().stream().filter(p -> masterOf.get(p) != master).toList();
                    stopped = masterOf.keySet().stream().filter(p -> masterOf.get(p) == master).toList();
                    return;
                }
            }
        }
    }

    private Bus connect() {
        Bus bus = Bus.connect(BusConfig.builder("redis-cluster://" + cluster.seeds()).keyPrefix(prefix)
                .partitions(TOPIC, PARTITIONS).commandTimeout(COMMAND_TIMEOUT).build());
        buses.add(bus);
        return bus;
    }

    private void publish(Bus bus, int partition, String kind) {
        int n = sequence.computeIfAbsent(partition, x -> new AtomicInteger()).getAndIncrement();
        String id = "p" + partition + "-" + kind + "-" + n;
        bus.publisher().publish(TOPIC, Message.builder("t", id.getBytes(StandardCharsets.UTF_8))
                .key(keys.get(partition).get(n % keys.get(partition).size())).build());
    }

    /** The ids published to these partitions. */
    private Set<String> ids(List<Integer> partitions) {
        return partitions.stream().flatMap(p -> {
            int n = sequence.getOrDefault(p, new AtomicInteger()).get();
            List<String> out = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String kind = i < PENDING ? "pending" : i < PENDING + NEW ? "new" : "during";
                out.add("p" + p + "-" + kind + "-" + i);
            }
            return out.stream();
        }).collect(Collectors.toSet());
    }

    private <T> T onMasterOf(int partition, java.util.function.Function<io.lettuce.core.api.sync.RedisCommands<String,
            String>, T> f) {
        return RedisClusterProcess.call(cluster.masters().get(masterOf.get(partition)), f);
    }

    private static int partitionOf(String id) {
        return Integer.parseInt(id.substring(1, id.indexOf('-')));
    }
}
