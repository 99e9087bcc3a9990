package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.Wait;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A topic's slot moves to another master while 10,000 messages flow through it, the way {@code redis-cli
 * --cluster reshard} moves it: the target IMPORTING, the source MIGRATING, the keys sent with one MIGRATE, then
 * the slot given to the target on every master. Every message is handled, none is lost, none dead-lettered, and
 * nothing stays pending; the consumers' read errors while the slot moves are retried (and reported).
 */
class ReshardingTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int MESSAGES = 10_000;
    private static RedisClusterProcess cluster;

    @BeforeAll
    static void startCluster() {
        cluster = RedisClusterProcess.start(3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void plainTopic_slotMovesUnderLoad_everyMessageHandled() throws Exception {
        reshardUnderLoad(1);
    }

    @Test
    void partitionedTopic_onePartitionsSlotMovesUnderLoad_everyMessageHandled() throws Exception {
        reshardUnderLoad(3);
    }

    private void reshardUnderLoad(int partitions) throws Exception {
        String prefix = "reshard-" + UUID.randomUUID().toString().substring(0, 8);
        String topic = "orders";
        String moved = new Partitions(topic, partitions).name(0);
        int slot = SlotHash.getSlot(moved);
        Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
        List<String> deadLetters = new CopyOnWriteArrayList<>();
        List<String> loopErrors = new CopyOnWriteArrayList<>();
        BusListener listener = new BusListener() {
            @Override
            public void onDeadLetter(DeadLetter deadLetter) {
                deadLetters.add(deadLetter.id());
            }

            @Override
            public void onLoopError(String loop, Throwable error) {
                loopErrors.add(loop + ": " + error.getMessage());
            }
        };
        BusConfig config = BusConfig.builder("redis-cluster://" + cluster.seeds()).keyPrefix(prefix)
                .partitions(topic, partitions).listener(listener).build();
        List<Bus> buses = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                Bus bus = Bus.connect(config);
                buses.add(bus);
                bus.subscribe(topic, "g", "c" + i, d -> handled.computeIfAbsent(
                        new String(d.message().payload(), StandardCharsets.UTF_8), k -> new AtomicInteger())
                        .incrementAndGet(), SubscribeOptions.builder().blockTime(Duration.ofMillis(500))
                        .minIdle(Duration.ofSeconds(5)).claimInterval(Duration.ofMillis(500)).build());
            }
            Bus producer = buses.get(0);
            Thread publishing = new Thread(() -> {
                for (int i = 0; i < MESSAGES; i += 50) {
                    List<Message> batch = new ArrayList<>();
                    for (int j = i; j < i + 50; j++) {
                        batch.add(Message.builder("n", Integer.toString(j).getBytes(StandardCharsets.UTF_8)).key("k" + (j % 97))
                                .build());
                    }
                    publishWithRetry(producer, topic, batch);
                }
            }, "publisher");
            publishing.start();

            Wait.until("a fifth handled before the move", WAIT, () -> handled.size() >= MESSAGES / 5);
            int handledAtMove = handled.size();
            long movedAt = System.nanoTime();
            RedisServerProcess source = masterOf(slot);
            RedisServerProcess target = cluster.masters().stream().filter(m -> m != source).findFirst().orElseThrow();
            cluster.beginSlotMigration(slot, source, target); // redis-cli --cluster reshard, for one slot
            cluster.finishSlotMigration(slot, source, target);
            double moveMillis = (System.nanoTime() - movedAt) / 1e6;
            assertThat(masterOf(slot)).isSameAs(target);

            publishing.join(WAIT.toMillis());
            Wait.until("every message handled", WAIT, () -> handled.size() == MESSAGES);
            Keys keys = new Keys(prefix);
            Partitions parts = new Partitions(topic, partitions);
            Wait.until("nothing pending", WAIT, () -> {
                for (int p = 0; p < partitions; p++) {
                    String stream = keys.stream(parts.name(p));
                    if (on(masterOf(SlotHash.getSlot(parts.name(p))), r -> r.xpending(stream, "g").getCount()) > 0) {
                        return false;
                    }
                }
                return true;
            });
            System.out.printf("resharding (%d partition%s): slot %d moved in %.0f ms with %d of %d handled; "
                            + "%d read errors retried; %d handled twice%n", partitions, partitions == 1 ? "" : "s",
                    slot, moveMillis, handledAtMove, MESSAGES, loopErrors.size(),
                    handled.values().stream().filter(c -> c.get() > 1).count());
            assertThat(handled).hasSize(MESSAGES);
            assertThat(deadLetters).isEmpty();
            for (int p = 0; p < partitions; p++) {
                String dead = keys.deadLetters(parts.name(p));
                long exists = on(masterOf(SlotHash.getSlot(parts.name(p))), r -> r.exists(dead));
                assertThat(exists).isZero();
            }
        } finally {
            buses.forEach(Bus::close);
        }
    }

    /** A batch that fails while the slot moves is sent again: the test is about consumers, not publishers. */
    private static void publishWithRetry(Bus bus, String topic, List<Message> batch) {
        for (int attempt = 1; ; attempt++) {
            try {
                bus.publisher().publishAll(topic, batch);
                return;
            } catch (RunbusException e) {
                if (attempt == 10) {
                    throw e;
                }
            }
        }
    }

    private static RedisServerProcess masterOf(int slot) {
        for (RedisServerProcess m : cluster.masters()) {
            String myId = on(m, RedisCommands::clusterMyId);
            Set<String> owners = new java.util.HashSet<>();
            for (String line : on(m, RedisCommands::clusterNodes).split("\n")) {
                String[] f = line.split(" ");
                if (f.length > 8 && f[0].equals(myId)) {
                    for (int i = 8; i < f.length; i++) {
                        String range = f[i];
                        if (range.startsWith("[")) {
                            continue;
                        }
                        String[] ends = range.split("-");
                        int from = Integer.parseInt(ends[0]);
                        int to = ends.length > 1 ? Integer.parseInt(ends[1]) : from;
                        if (slot >= from && slot <= to) {
                            owners.add(myId);
                        }
                    }
                }
            }
            if (!owners.isEmpty()) {
                return m;
            }
        }
        throw new IllegalStateException("no master owns slot " + slot);
    }

    private static <T> T on(RedisServerProcess node, java.util.function.Function<RedisCommands<String, String>, T> f) {
        return RedisClusterProcess.call(node, f);
    }
}
