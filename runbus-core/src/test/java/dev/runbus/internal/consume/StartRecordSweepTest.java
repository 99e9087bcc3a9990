package dev.runbus.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.BusListener;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import dev.runbus.internal.telemetry.SafeListener;
import dev.runbus.testing.OneStream;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.XReadArgs;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The sweep of an unordered group's start record (sweep_starts.lua, run by the janitor): on the local Redis, a field
 * whose entry is no longer pending goes, one whose entry is pending stays.
 */
class StartRecordSweepTest {

    private OneStream one;

    @BeforeEach
    void connect() {
        one = new OneStream("test-sweep-starts");
    }

    @AfterEach
    void tearDown() {
        one.close();
    }

    @Test
    void fieldsOfEntriesNoLongerPendingGo_fieldsOfPendingEntriesStay() {
        String pending = readOne();
        String acked = readOne();
        one.redis.xack(one.stream, "g", acked);
        one.redis.hset(one.starts(), Map.of(pending, "1", acked, "1", "999-0", "2"));

        long removed = new StartRecordSweep(one.scripts, new SafeListener(BusListener.NONE), 5_000)
                .sweep(one.partitions, "g");

        assertThat(removed).isEqualTo(2);
        assertThat(one.redis.hgetall(one.starts())).containsOnlyKeys(pending);
    }

    @Test
    void aRecordWhoseGroupIsGoneGoesWhole() {
        String id = readOne();
        one.redis.hset(one.starts(), id, "1");
        one.redis.xgroupDestroy(one.stream, "g");

        long removed = new StartRecordSweep(one.scripts, new SafeListener(BusListener.NONE), 5_000)
                .sweep(one.partitions, "g");

        assertThat(removed).isEqualTo(1);
        assertThat(one.redis.exists(one.starts())).isZero();
    }

    @Test
    void manyPagesAreSweptInOneRound() {
        for (int i = 1; i <= 3 * StartRecordSweep.PAGE; i++) {
            one.redis.hset(one.starts(), "1-" + i, "1");
        }
        long removed = new StartRecordSweep(one.scripts, new SafeListener(BusListener.NONE), 5_000)
                .sweep(one.partitions, "g");
        assertThat(removed).isEqualTo(3L * StartRecordSweep.PAGE);
        assertThat(one.redis.exists(one.starts())).isZero();
    }

    /** The janitor of a bus subscribed to the group sweeps its record; the field of a running handler stays. */
    @Test
    void theJanitorSweepsTheRecordsOfTheGroupsItsBusSubscribesTo() throws Exception {
        String prefix = "test-janitor-sweep-" + UUID.randomUUID();
        String starts = prefix + ":{jobs}:starts:g";
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        try (Bus bus = Bus.connect(BusConfig.builder(RedisTarget.local().uri()).keyPrefix(prefix)
                .janitorInterval(Duration.ofMillis(200)).build());
             Subscription s = bus.subscribe("jobs", "g", "c1", d -> {
                 running.countDown();
                 release.await();
             }, SubscribeOptions.builder().concurrency(1).build())) {
            String id = bus.publisher().publish("jobs", Message.of("job", "x".getBytes(StandardCharsets.UTF_8)));
            running.await();
            // The running entry's own start is sent without waiting: it may land after the handler started.
            Wait.until("the running entry's start recorded", Duration.ofSeconds(20), () -> one.redis.hexists(starts, id));
            one.redis.hset(starts, "999-0", "1"); // a field left behind by a fault
            Wait.until("the stray field swept", Duration.ofSeconds(20), () -> !one.redis.hexists(starts, "999-0"));
            assertThat(one.redis.hgetall(starts)).containsOnlyKeys(id);
            release.countDown();
        } finally {
            RedisTarget.local().deleteKeys(prefix);
        }
    }

    /**
     * A group deleted from under its subscription (XGROUP DESTROY by another tool) while its handler runs: the
     * janitor's pass reports the group it cannot prune and goes on, deleting another group's consumer that left and
     * removing the gone group's start record whole. The subscription's room is full (its one handler holds the first
     * entry, the other two wait), so its read loop does not create the group again meanwhile.
     */
    @Test
    void aGroupGoneFromUnderItsSubscriptionHoldsBackNoneOfTheJanitorsWork() throws Exception {
        String prefix = "test-janitor-gone-" + UUID.randomUUID();
        String starts = prefix + ":{jobs}:starts:doomed";
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        List<String> loopErrors = new CopyOnWriteArrayList<>();
        try (Bus bus = Bus.connect(BusConfig.builder(RedisTarget.local().uri()).keyPrefix(prefix)
                .janitorInterval(Duration.ofMillis(200)).heartbeatInterval(Duration.ofMillis(200))
                .consumerDeadAfter(Duration.ofSeconds(1)).listener(new BusListener() {
                    @Override
                    public void onLoopError(String loop, Throwable error) {
                        loopErrors.add(loop + ": " + error.getMessage());
                    }
                }).build())) {
            Subscription held = bus.subscribe("jobs", "doomed", "c1", d -> {
                running.countDown();
                release.await();
            }, SubscribeOptions.builder().concurrency(1).batchSize(1).minIdle(Duration.ofMinutes(1)).build());
            bus.subscribe("jobs", "other", "stays", d -> { });
            bus.subscribe("jobs", "other", "leaves", d -> { }).close();
            for (int i = 0; i < 3; i++) {
                bus.publisher().publish("jobs", Message.of("job", "x".getBytes(StandardCharsets.UTF_8)));
            }
            running.await();
            Wait.until("the running entry's start recorded", Duration.ofSeconds(20), () -> one.redis.exists(starts) == 1);
            Wait.until("all three read: no room for more", Duration.ofSeconds(20), () -> held.inFlight() == 3);
            one.redis.xgroupDestroy(prefix + ":{jobs}:stream", "doomed");

            Wait.until("the gone group's start record removed", Duration.ofSeconds(20),
                    () -> one.redis.exists(starts) == 0);
            Wait.until("the consumer that left the other group deleted", Duration.ofSeconds(20),
                    () -> bus.inspector().consumers("jobs", "other").stream().noneMatch(c -> c.name().equals("leaves")));
            assertThat(loopErrors).as("the gone group reported").anyMatch(e -> e.contains("jobs/doomed")
                    && e.contains("NOGROUP"));
            release.countDown();
        } finally {
            release.countDown();
            RedisTarget.local().deleteKeys(prefix);
        }
    }

    /** One new entry read by consumer c1, pending. */
    private String readOne() {
        one.redis.xadd(one.stream, "type", "x", "payload", "p");
        return one.redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.StreamOffset.lastConsumed(one.stream)).get(0)
                .getId();
    }
}
