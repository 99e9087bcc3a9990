package dev.runbus;

import static dev.runbus.testkit.Deployment.CLUSTER;
import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XAddArgs;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;

/**
 * Retention on a running bus (docs/architecture.md, rule 7): streams are trimmed to what their groups still need, never an
 * entry a group has not acknowledged or read, never an entry younger than the retention age; dead letters only
 * when opted in. On Redis 6.2 too (XINFO GROUPS without entries-read and lag), and on a cluster of 3 masters, where
 * each partition's script touches its own stream only, so a topic's partitions are trimmed each on its own node.
 */
@OnDeployments({LOCAL, REDIS_62, CLUSTER})
class RetentionTest {

    /**
     * The loops' errors but timeouts: a renewal or a call that outlived its wait on a busy host is reported and
     * tried again, and says nothing of what these tests check; anything Redis refused stays in.
     */
    private static final java.util.function.Predicate<String> TIMEOUTS_ASIDE = e -> !e.contains("timed out");

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final SubscribeOptions QUICK = SubscribeOptions.builder().blockTime(Duration.ofMillis(100)).build();

    private final String prefix = "test-retention-" + UUID.randomUUID();
    private final Keys keys = new Keys(prefix);
    private final List<Bus> buses = new ArrayList<>();
    private final Map<String, AtomicLong> trimmed = new ConcurrentHashMap<>();
    private final AtomicLong deadLettersTrimmed = new AtomicLong();
    private final List<String> loopErrors = new CopyOnWriteArrayList<>();

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    @AfterEach
    void tearDown() {
        buses.forEach(Bus::close);
        target().deleteKeys(prefix);
    }

    private Bus bus(UnaryOperator<BusConfig.Builder> options) {
        BusListener counting = new BusListener() {
            @Override
            public void onRetentionTrimmed(String topic, long entries) {
                trimmed.computeIfAbsent(topic, t -> new AtomicLong()).addAndGet(entries);
            }

            @Override
            public void onDeadLettersTrimmed(String topic, long entries) {
                deadLettersTrimmed.addAndGet(entries);
            }

            @Override
            public void onLoopError(String loop, Throwable error) {
                loopErrors.add(loop + ": " + error);
            }
        };
        Bus bus = Bus.connect(options.apply(BusConfig.builder(target().uri()).keyPrefix(prefix).listener(counting)
                .retentionInterval(Duration.ofMillis(50))).build());
        buses.add(bus);
        return bus;
    }

    private RedisClusterCommands<String, String> redis() {
        return target().redis();
    }

    private long trimmedOf(String topic) {
        AtomicLong n = trimmed.get(topic);
        return n == null ? 0 : n.get();
    }

    private List<String> ids(String key) {
        return redis().xrange(key, Range.create("-", "+")).stream().map(StreamMessage::getId).toList();
    }

    private static boolean older(String a, String b) {
        return Partitions.ORDER.compare(new Partitions.Id(0, a), new Partitions.Id(0, b)) < 0;
    }

    private static Message message(int i) {
        return Message.of("job", Integer.toString(i).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A fast group handles everything at once; a slow group, read here without a bus, takes 20 entries at a time
     * and acknowledges a batch only after reading the next. While a publisher publishes without pause, each
     * round waits until retention has trimmed the stream to the slow group's oldest pending entry, then checks
     * that every entry the slow group has not acknowledged (pending or not yet read) is still there, id by id.
     * Deleting the slow group lets retention trim the rest.
     */
    @Test
    @Timeout(120)
    void underConstantPublishTheStreamKeepsExactlyWhatTheSlowGroupStillNeeds() throws Exception {
        Bus bus = bus(b -> b.retentionAge(Duration.ZERO));
        String key = keys.stream("orders");
        redis().xgroupCreate(XReadArgs.StreamOffset.from(key, "0"), "slow", XGroupCreateArgs.Builder.mkstream(true));
        AtomicInteger fastHandled = new AtomicInteger();
        bus.subscribe("orders", "fast", "f1", d -> fastHandled.incrementAndGet(), QUICK);

        List<String> published = new CopyOnWriteArrayList<>();
        AtomicBoolean publishing = new AtomicBoolean(true);
        Thread publisher = new Thread(() -> {
            Publisher p = bus.publisher();
            for (int i = 0; publishing.get(); i++) {
                published.add(p.publish("orders", message(i)));
                LockSupport.parkNanos(500_000); // a steady stream, not a flood: pacing only
            }
        }, "test-publisher");
        publisher.start();

        Set<String> acked = new HashSet<>();
        List<String> previous = List.of();
        int rounds = 0;
        while (rounds < 15) {
            int wanted = acked.size() + previous.size() + 40;
            Wait.until("entries for the slow group", WAIT, () -> published.size() >= wanted);
            List<String> batch = new ArrayList<>();
            for (StreamMessage<String, String> m : redis().xreadgroup(Consumer.from("slow", "s1"),
                    XReadArgs.Builder.count(20), XReadArgs.StreamOffset.lastConsumed(key))) {
                batch.add(m.getId());
            }
            if (!previous.isEmpty()) {
                redis().xack(key, "slow", previous.toArray(new String[0]));
                acked.addAll(previous);
            }
            String oldestPending = batch.get(0);
            Wait.until("trimmed up to the slow group's oldest pending entry " + oldestPending, WAIT,
                    () -> !older(ids(key).get(0), oldestPending));

            List<String> sent = List.copyOf(published); // taken before the stream is read: all are in Redis
            List<String> stream = ids(key);
            Set<String> inStream = new HashSet<>(stream);
            List<String> missing = sent.stream().filter(id -> !acked.contains(id) && !inStream.contains(id)).toList();
            assertThat(missing).as("entries the slow group has not acknowledged, gone from the stream").isEmpty();
            assertThat(stream.get(0)).as("the stream starts at the slow group's oldest pending entry")
                    .isEqualTo(oldestPending);
            previous = batch;
            rounds++;
        }
        assertThat(trimmedOf("orders")).isPositive();
        assertThat(loopErrors).filteredOn(TIMEOUTS_ASIDE).as("errors of the bus's loops").isEmpty();

        publishing.set(false);
        publisher.join();
        assertThat(bus.deleteGroup("orders", "slow")).isTrue();
        Wait.until("every entry handled by the fast group", WAIT, () -> fastHandled.get() == published.size());
        // The report follows the trim: wait for it, then the stream must be empty (each entry trimmed once).
        Wait.until("every entry trimmed and reported once the slow group is gone", WAIT,
                () -> trimmedOf("orders") >= published.size());
        assertThat(trimmedOf("orders")).isEqualTo(published.size());
        assertThat(redis().xlen(key)).isZero();
        assertThat(bus.inspector().groups("orders")).extracting(Inspector.GroupInfo::name).containsExactly("fast");
    }

    @Test
    void theRetentionAgeKeepsYoungEntries() {
        String key = keys.stream("orders");
        for (int i = 1; i <= 5; i++) { // from 1970: far older than the hour kept
            redis().xadd(key, new XAddArgs().id("1000-" + i), "type", "old", "payload", "x");
        }
        Bus bus = bus(b -> b.retentionAge(Duration.ofHours(1)));
        AtomicInteger handled = new AtomicInteger();
        bus.subscribe("orders", "g", "c1", d -> handled.incrementAndGet(), QUICK);
        List<String> young = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            young.add(bus.publisher().publish("orders", message(i)));
        }
        Wait.until("all 15 handled", WAIT, () -> handled.get() == 15);
        Wait.until("the 5 old entries trimmed", WAIT, () -> trimmedOf("orders") == 5);

        assertThat(ids(key)).containsExactlyElementsOf(young);
        List<Inspector.RetentionInfo> info = bus.inspector().retention("orders");
        assertThat(info).singleElement().satisfies(r -> {
            assertThat(r.length()).isEqualTo(10);
            assertThat(r.firstId()).isEqualTo(young.get(0));
            assertThat(r.heldBy()).isEqualTo("g");
        });
    }

    @Test
    void everyPartitionOfAPartitionedTopicIsTrimmed() {
        Bus bus = bus(b -> b.retentionAge(Duration.ZERO).partitions("orders", 3));
        AtomicInteger handled = new AtomicInteger();
        bus.subscribe("orders", "g", "c1", d -> handled.incrementAndGet(), QUICK);
        Partitions partitions = new Partitions("orders", 3);
        for (int i = 0; i < 60; i++) {
            bus.publisher().publish("orders", "user-" + i, message(i));
        }
        Wait.until("all 60 handled", WAIT, () -> handled.get() == 60);
        Wait.until("all 60 trimmed", WAIT, () -> trimmedOf("orders") == 60);

        for (String name : partitions.names()) {
            assertThat(redis().xlen(keys.stream(name))).as(name).isZero();
        }
        assertThat(bus.inspector().retention("orders")).hasSize(3).allSatisfy(r -> {
            assertThat(r.length()).isZero();
            assertThat(r.heldBy()).isEqualTo("g");
        });
    }

    @Test
    void deadLettersAreKeptUnlessOptedIn() {
        String dead = keys.deadLetters("orders");
        redis().xadd(dead, new XAddArgs().id("1000-1"), "type", "old", "payload", "x");
        Bus bus = bus(b -> b.retentionAge(Duration.ZERO));
        AtomicInteger handled = new AtomicInteger();
        bus.subscribe("orders", "g", "c1", d -> handled.incrementAndGet(), QUICK);
        for (int round = 1; round <= 2; round++) { // the second trim comes after the first round ended
            bus.publisher().publish("orders", message(round));
            long want = round;
            Wait.until("round " + round + " trimmed", WAIT, () -> trimmedOf("orders") == want);
        }
        assertThat(ids(dead)).containsExactly("1000-1");
        assertThat(deadLettersTrimmed.get()).isZero();
    }

    @Test
    void oldDeadLettersAreTrimmedWhenOptedIn() {
        String dead = keys.deadLetters("orders");
        redis().xadd(dead, new XAddArgs().id("1000-1"), "type", "old", "payload", "x");
        redis().xadd(dead, new XAddArgs().id("1000-2"), "type", "old", "payload", "x");
        String young = redis().xadd(dead, "type", "young", "payload", "x");
        Bus bus = bus(b -> b.deadLetterRetention(Duration.ofMinutes(10)));
        bus.subscribe("orders", "g", "c1", d -> { }, QUICK);

        Wait.until("2 old dead letters trimmed", WAIT, () -> deadLettersTrimmed.get() == 2);
        assertThat(ids(dead)).containsExactly(young);
    }

    @Test
    void deleteGroupRemovesTheGroupFromEveryPartitionWithItsHeartbeats() {
        Bus bus = bus(b -> b.partitions("orders", 3));
        Subscription s = bus.subscribe("orders", "g", "c1", d -> { }, QUICK);
        bus.subscribe("orders", "other", "c1", d -> { }, QUICK);
        s.close();
        redis().zadd(keys.heartbeats("orders", "g"), 1, "someone");
        redis().zadd(keys.members("orders", "g"), 1, "someone");

        assertThat(bus.deleteGroup("orders", "g")).isTrue();

        assertThat(bus.inspector().groups("orders")).extracting(Inspector.GroupInfo::name).containsExactly("other");
        assertThat(redis().exists(keys.heartbeats("orders", "g"), keys.members("orders", "g"))).isZero();
        assertThat(bus.deleteGroup("orders", "g")).isFalse();
        assertThat(bus.deleteGroup("never-used", "g")).isFalse();
    }

    /**
     * A group deleted and created again under its name counts deliveries afresh: the start record of the deleted
     * group (the handler starts on each of its pending entries) goes with it, on every partition. Here an entry whose
     * handler started once is pending when the group is deleted; in the new group a consumer reads it and dies before
     * its handler starts, and the consumer of that name, restarted, re-reads it as its first delivery. Before the
     * record went with the group, it came as delivery 2.
     */
    @Test
    void aGroupDeletedAndCreatedAgainCountsDeliveriesAfresh() {
        Bus bus = bus(b -> b.partitions("orders", 3));
        AtomicInteger failed = new AtomicInteger();
        Subscription first = bus.subscribe("orders", "g", "c1", d -> {
            failed.incrementAndGet();
            throw new IllegalStateException("fails, stays pending");
        }, QUICK);
        bus.publisher().publish("orders", Message.of("t", "x".getBytes(StandardCharsets.UTF_8)).withKey("k"));
        String name = new Partitions("orders", 3).name(Partitioner.partitionOf("k", 3));
        String stream = keys.stream(name);
        Wait.until("the handler's start recorded", WAIT, () -> failed.get() == 1
                && redis().hlen(keys.starts(name, "g")) == 1);
        first.close();

        assertThat(bus.deleteGroup("orders", "g")).isTrue();
        for (String partition : new Partitions("orders", 3).names()) {
            assertThat(redis().exists(keys.starts(partition, "g"))).as("start record of %s", partition).isZero();
        }

        // The group created again as a subscription creates it, and the entry read by a consumer that dies before
        // its handler starts: pending under c2, with no start of the new group recorded.
        redis().xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g");
        assertThat(redis().xreadgroup(Consumer.from("g", "c2"), XReadArgs.StreamOffset.lastConsumed(stream)))
                .hasSize(1);
        List<Long> deliveryCounts = new CopyOnWriteArrayList<>();
        bus.subscribe("orders", "g", "c2", d -> deliveryCounts.add(d.deliveryCount()), QUICK);
        Wait.until("the entry handled in the new group", WAIT, () -> !deliveryCounts.isEmpty());
        assertThat(deliveryCounts).containsExactly(1L);
    }
}
