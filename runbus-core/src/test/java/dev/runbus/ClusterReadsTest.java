package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** How a consumer reads on a Redis Cluster: long blocking reads, and every partition's turn when room is short. */
class ClusterReadsTest {

    /**
     * The loops' errors but timeouts: a renewal or a call that outlived its wait on a busy host is reported and
     * tried again, and says nothing of what these tests check; anything Redis refused stays in.
     */
    private static final java.util.function.Predicate<String> TIMEOUTS_ASIDE = e -> !e.contains("timed out");

    private static final Duration WAIT = Duration.ofSeconds(30);
    private final RedisTarget cluster = RedisTarget.cluster();
    private final String prefix = "cluster-reads-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<Bus> buses = new ArrayList<>();
    private final List<String> loopErrors = new CopyOnWriteArrayList<>();

    @AfterEach
    void tearDown() {
        buses.forEach(Bus::close);
        cluster.deleteKeys(prefix);
    }

    private Bus bus(int partitions, Duration commandTimeout) {
        Bus bus = Bus.connect(BusConfig.builder(cluster.uri()).keyPrefix(prefix).partitions("jobs", partitions)
                .commandTimeout(commandTimeout).listener(new BusListener() {
                    @Override
                    public void onLoopError(String loop, Throwable error) {
                        loopErrors.add(loop + ": " + error.getMessage());
                    }
                }).build());
        buses.add(bus);
        return bus;
    }

    @Test
    void aReadBlockingLongerThanTheCommandTimeoutIsNotFailedByTheClient() throws Exception {
        Bus bus = bus(1, Duration.ofSeconds(1));
        List<String> handled = new CopyOnWriteArrayList<>();
        bus.subscribe("jobs", "g", "c1", d -> handled.add(d.message().id()),
                SubscribeOptions.builder().blockTime(Duration.ofSeconds(4)).build());
        // The scenario itself: the consumer's read blocks, idle, for longer than the command timeout.
        Thread.sleep(2_500);
        String id = bus.publisher().publish("jobs", Message.builder("t", new byte[0]).id("m1").build());
        Wait.until("handled", WAIT, () -> handled.contains("m1"));
        assertThat(id).isNotBlank();
        assertThat(loopErrors).filteredOn(TIMEOUTS_ASIDE).as("errors of the bus's loops").isEmpty();
        // Acks are sent after the handler returns, batched: the entry leaves the pending list a moment later.
        Wait.until("m1 acked", WAIT, () -> cluster.redis().xpending(prefix + ":{jobs}:stream", "g").getCount() == 0);
    }

    @Test
    void withLessRoomThanPartitionsEveryPartitionGetsItsTurn() {
        Bus bus = bus(6, Duration.ofSeconds(10));
        for (int i = 0; i < 300; i++) {
            bus.publisher().publish("jobs", "key-" + (i % 30), Message.of("t", new byte[0]));
        }
        List<Integer> partitionsInOrder = new CopyOnWriteArrayList<>();
        bus.subscribe("jobs", "g", "c1", d -> partitionsInOrder.add(Integer.parseInt(
                        d.streamId().substring(d.streamId().indexOf('@') + 1))),
                SubscribeOptions.builder().concurrency(1).batchSize(2).blockTime(Duration.ofMillis(200)).build());
        Wait.until("all handled", WAIT, () -> partitionsInOrder.size() >= 300);
        // Every partition has a backlog of about 50; with turns kept, the first 60 handled come from all six.
        Set<Integer> early = new HashSet<>(partitionsInOrder.subList(0, 60));
        assertThat(early).containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5);
        assertThat(loopErrors).filteredOn(TIMEOUTS_ASIDE).as("errors of the bus's loops").isEmpty();
    }
}
