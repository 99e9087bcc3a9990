package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.RedisURI;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import io.lettuce.core.models.stream.PendingMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * On a Redis Cluster, the read of a partition whose master is stopped (SIGSTOP) is left in flight while the others are
 * read; its answer comes when the master resumes, while every slot of the consumer is taken by running or waiting
 * entries. Its entry is held and kept alive at once, and runs once. Consumer "a" (one handler, batches of one: three
 * slots) reads; "b" takes over what "a" leaves idle.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LateReadAnswerOnClusterTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(3);

    private static RedisClusterProcess cluster;
    private static RedisClusterClient client;
    private static RedisAdvancedClusterCommands<String, String> redis;

    /** The partition whose master stops, and the other, which fills a's slots; on different masters. */
    private static final int LATE = 1;
    private static final int FILL = 0;

    private final String prefix = "late-read-" + UUID.randomUUID().toString().substring(0, 8);
    /** A topic whose two partitions are on different masters (its own keys are with partition 0's). */
    private final String topic = topicOnTwoMasters();
    private final Partitions partitions = new Partitions(topic, 2);
    private final List<Bus> buses = new ArrayList<>();
    /** The consumers that ran each entry, by payload. */
    private final Map<String, List<String>> runs = new ConcurrentHashMap<>();
    private final CountDownLatch releaseB1 = new CountDownLatch(1);
    private final CountDownLatch releaseA = new CountDownLatch(1);
    private Bus publisher;
    private Subscription a;

    @BeforeAll
    static void startCluster() {
        // No replica, and a node timeout longer than any stop here: the stopped master stays the master of its slots.
        cluster = RedisClusterProcess.startWithoutReplicas(3, "--cluster-node-timeout", "20000",
                "--cluster-require-full-coverage", "no");
        client = RedisClusterClient.create(RedisURI.create(cluster.masters().get(0).uri()));
        redis = client.connect().sync();
    }

    @AfterAll
    static void stopCluster() {
        RedisClusterProcess.shutdown(client);
        cluster.close();
    }

    @AfterEach
    void tearDown() {
        releaseB1.countDown();
        releaseA.countDown();
        buses.forEach(Bus::close);
    }

    @Test
    void aReadAnsweredWhileNoSlotIsFree_isHeldAndKeptAliveAtOnce() {
        String x = lateReadOfX();

        // w, read by d now and never acked, shows when b takes over what has been idle as long as x was since its read.
        publish("w", FILL);
        redis.xreadgroup(Consumer.from("g", "d"), XReadArgs.Builder.count(1),
                XReadArgs.StreamOffset.lastConsumed(stream(FILL)));
        Subscription b = subscribeB();
        Wait.until("b took w over", WAIT, () -> runs.containsKey("w"));
        Optional<String> ownerOfX = owner(LATE, x);
        b.close(); // reads nothing new from now on

        releaseA.countDown();
        // z is read once a's slots free up, not before x is handed on, however late: its run ends the look.
        publish("z", FILL);
        Wait.until("a ran z, and everything acked", WAIT, () -> runs.containsKey("z") && pendingCount(LATE) == 0
                && pendingCount(FILL) == 0);
        assertThat(runs).as("consumers that ran each entry").isEqualTo(Map.of("b1", List.of("a"), "b2", List.of("a"),
                "b3", List.of("a"), "y", List.of("a"), "x", List.of("a"), "w", List.of("b"), "z", List.of("a")));
        assertThat(ownerOfX).as("x's owner once b took over w, idle no longer than x").contains("a");
    }

    /**
     * Fills a's three slots with b1 (running until released), b2 and b3 (waiting for it), all of partition FILL; then
     * publishes x to partition LATE and y to FILL, stops LATE's master, and frees one slot. a's next read turns to LATE
     * first (FILL filled the last), whose read gets no answer and is left in flight, then reads y, which takes the slot
     * again. Resumes the master: the read runs and delivers x to a while no slot is free. Returns x's stream id.
     */
    private String lateReadOfX() {
        publisher = bus();
        for (String b : List.of("b1", "b2", "b3")) {
            publish(b, FILL);
        }
        a = bus().subscribe(topic, "g", "a", d -> {
            String payload = ran(d, "a");
            if (payload.equals("b1")) {
                releaseB1.await();
            } else if (payload.startsWith("b")) {
                releaseA.await();
            }
        }, SubscribeOptions.builder().concurrency(1).batchSize(1).blockTime(Duration.ofMillis(200))
                .minIdle(Duration.ofSeconds(10)).keepAliveInterval(Duration.ofMillis(300))
                .claimInterval(Duration.ofSeconds(60)).build());
        Wait.until("a holding b1, b2 and b3", WAIT, () -> a.inFlight() == 3 && runs.containsKey("b1"));

        String x = publish("x", LATE);
        String y = publish("y", FILL);
        RedisServerProcess master = cluster.masters().get(masterIndexOf(partitions.name(LATE)));
        master.pause();
        try {
            releaseB1.countDown();
            Wait.until("a read y, after sending the read of the stopped partition", WAIT,
                    () -> owner(FILL, y).equals(Optional.of("a")));
        } finally {
            master.resume();
        }
        Wait.until("x delivered to a", WAIT, () -> owner(LATE, x).equals(Optional.of("a")));
        return x;
    }

    private Subscription subscribeB() {
        return bus().subscribe(topic, "g", "b", d -> ran(d, "b"), SubscribeOptions.builder()
                .minIdle(Duration.ofMillis(1500)).claimInterval(Duration.ofMillis(100))
                .blockTime(Duration.ofMillis(200)).build());
    }

    private String ran(Delivery d, String consumer) {
        String payload = new String(d.message().payload(), StandardCharsets.UTF_8);
        runs.computeIfAbsent(payload, k -> new CopyOnWriteArrayList<>()).add(consumer);
        return payload;
    }

    private Bus bus() {
        Bus bus = Bus.connect(BusConfig.builder("redis-cluster://" + cluster.seeds()).keyPrefix(prefix)
                .partitions(topic, partitions.count()).commandTimeout(COMMAND_TIMEOUT).build());
        buses.add(bus);
        return bus;
    }

    /** Publishes to {@code partition}; returns the entry's stream id. */
    private String publish(String payload, int partition) {
        String id = publisher.publisher().publish(topic, keyOf(partition),
                Message.builder("job", payload.getBytes(StandardCharsets.UTF_8)).build());
        return id.substring(0, id.indexOf('@'));
    }

    private String stream(int partition) {
        return new Keys(prefix).stream(partitions.name(partition));
    }

    private Optional<String> owner(int partition, String id) {
        return redis.xpending(stream(partition), "g", Range.create(id, id), Limit.from(1)).stream()
                .map(PendingMessage::getConsumer).findFirst();
    }

    private long pendingCount(int partition) {
        return redis.xpending(stream(partition), "g").getCount();
    }

    private String keyOf(int partition) {
        for (int i = 0; ; i++) {
            if (Partitioner.partitionOf("k" + i, partitions.count()) == partition) {
                return "k" + i;
            }
        }
    }

    private static String topicOnTwoMasters() {
        for (int i = 0; ; i++) {
            Partitions p = new Partitions("jobs" + i, 2);
            if (masterIndexOf(p.name(0)) != masterIndexOf(p.name(1))) {
                return p.topic();
            }
        }
    }

    /** Slots are split evenly over the masters, in order ({@link RedisClusterProcess}). */
    private static int masterIndexOf(String tag) {
        int slot = SlotHash.getSlot(tag);
        for (int i = 0; i < 3; i++) {
            if (slot < (i + 1) * SlotHash.SLOT_COUNT / 3) {
                return i;
            }
        }
        throw new IllegalStateException("slot " + slot);
    }
}
