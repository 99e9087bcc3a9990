package dev.runbus;

import static dev.runbus.testkit.Deployment.CLUSTER;
import static dev.runbus.testkit.Deployment.LOCAL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.testing.Recorder;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.RedisBusyException;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.models.stream.PendingMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;

/**
 * Unordered consumption of a topic of four partitions, and the read side (inspector, dead letters) over its
 * partitions, against the machine's Redis and a cluster of 3 masters (evenly split slots;
 * {@link PartitionSpreadOnClusterTest}: how the partitions spread over them). The behaviour suite covers a topic of
 * one partition; its cases build the plain stream keys themselves, so the partitioned cases are here, asserting per
 * partition stream.
 */
@OnDeployments({LOCAL, CLUSTER})
class PartitionedTopicTest {

    static final Duration WAIT = Duration.ofSeconds(20);
    static final int N = 4;

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    String prefix;
    final String topic = "orders";
    Recorder events;
    Bus bus;
    final List<Bus> extraBuses = new ArrayList<>();

    @BeforeEach
    void setUp() {
        prefix = "rbpart-" + UUID.randomUUID().toString().substring(0, 8);
        events = new Recorder();
        bus = newBus(events, N, Duration.ofMinutes(10));
    }

    @AfterEach
    void tearDown() {
        extraBuses.forEach(Bus::close);
        bus.close();
        target().deleteKeys(prefix);
    }

    Bus newBus(BusListener listener, int partitions, Duration consumerDeadAfter) {
        Bus b = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix).listener(listener)
                .partitions(topic, partitions).heartbeatInterval(Duration.ofMillis(100))
                .consumerDeadAfter(consumerDeadAfter).build());
        if (bus != null) {
            extraBuses.add(b);
        }
        return b;
    }

    static SubscribeOptions.Builder options() {
        return SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).minIdle(Duration.ofSeconds(60))
                .claimInterval(Duration.ofMillis(50));
    }

    RedisClusterCommands<String, String> redis() {
        return target().redis();
    }

    String partitionName(int p) {
        return new dev.runbus.internal.redis.Partitions(topic, N).name(p);
    }

    String stream(int p) {
        return prefix + ":{" + partitionName(p) + "}:stream";
    }

    String dead(int p) {
        return prefix + ":{" + partitionName(p) + "}:dead";
    }

    List<PendingMessage> pending(int p, String group) {
        return redis().xpending(stream(p), group, Range.create("-", "+"), Limit.from(1000));
    }

    boolean pelEmptyEverywhere(String group) {
        return IntStream.range(0, N).allMatch(p -> pending(p, group).isEmpty());
    }

    static Message msg(int i) {
        return Message.builder("order.created", ("payload-" + i).getBytes(StandardCharsets.UTF_8)).id("m-" + i)
                .build();
    }

    List<String> publish(int n) {
        return bus.publisher().publishAll(topic, IntStream.range(0, n).mapToObj(PartitionedTopicTest::msg)
                .collect(Collectors.toList()));
    }

    static int partitionOf(String qualifiedId) {
        return Integer.parseInt(qualifiedId.substring(qualifiedId.indexOf('@') + 1));
    }

    static String plain(String qualifiedId) {
        return qualifiedId.substring(0, qualifiedId.indexOf('@'));
    }

    /** Creates the group on every partition and reads everything as a consumer of a process that then died. */
    int readAsGhost(String group, String consumer) {
        int read = 0;
        for (int p = 0; p < N; p++) {
            try {
                redis().xgroupCreate(XReadArgs.StreamOffset.from(stream(p), "0"), group,
                        XGroupCreateArgs.Builder.mkstream());
            } catch (RedisBusyException exists) {
                // fine
            }
            read += redis().xreadgroup(Consumer.from(group, consumer), XReadArgs.Builder.count(1000),
                    XReadArgs.StreamOffset.lastConsumed(stream(p))).size();
        }
        return read;
    }

    Set<String> keysUnderPrefix() {
        Set<String> found = new HashSet<>();
        ScanIterator<String> it = ScanIterator.scan(redis(), ScanArgs.Builder.matches(prefix + ":*").limit(500));
        while (it.hasNext()) {
            found.add(it.next());
        }
        return found;
    }

    // ---------------------------------------------------------------- consumption

    @Test
    void workQueue_twoConsumersHandleEveryMessageOfEveryPartitionOnce() {
        int n = 400;
        Map<String, Set<String>> byConsumer = new ConcurrentHashMap<>();
        for (String name : List.of("c1", "c2")) {
            bus.subscribe(topic, "workers", name, d -> {
                events.record(d);
                byConsumer.computeIfAbsent(name, k -> ConcurrentHashMap.newKeySet()).add(d.message().id());
            }, options().concurrency(4).batchSize(20).build());
        }
        List<String> ids = publish(n);
        assertThat(ids).hasSize(n).doesNotHaveDuplicates().allMatch(id -> id.matches("\\d+-\\d+@[0-3]"));

        Wait.until("all " + n + " handled", WAIT, () -> events.calls() >= n);
        Wait.until("PEL empty on every partition", WAIT, () -> pelEmptyEverywhere("workers"));
        assertThat(events.calls()).isEqualTo(n);
        assertThat(events.callsByMessageId).hasSize(n);
        assertThat(events.callsByMessageId.values()).allMatch(c -> c.get() == 1);
        assertThat(events.deliveryCounts()).containsOnly(1L);
        assertThat(events.deliveries.stream().map(Delivery::streamId)).containsExactlyInAnyOrderElementsOf(ids);
        for (int p = 0; p < N; p++) {
            assertThat(redis().xlen(stream(p))).as("partition " + p).isEqualTo(n / N); // unkeyed: spread evenly
        }
        assertThat(byConsumer).hasSize(2);
        assertThat(byConsumer.values().stream().mapToInt(Set::size).sum()).isEqualTo(n);
        assertThat(redis().exists(prefix + ":{" + topic + "}:stream")).isZero(); // no plain stream
    }

    @Test
    void keyedPublish_landsOnThePartitionOfItsKey() {
        for (String key : List.of("user-1", "user-42", "order:9001", "日本", "a")) {
            String id = bus.publisher().publish(topic, Message.builder("t", new byte[0]).key(key).build());
            int p = Partitioner.partitionOf(key, N);
            assertThat(partitionOf(id)).as(key).isEqualTo(p);
            List<StreamMessage<String, String>> raw = redis().xrange(stream(p), Range.create(plain(id), plain(id)));
            assertThat(raw).as(key).hasSize(1);
            assertThat(raw.get(0).getBody()).containsEntry("key", key);
        }
    }

    @Test
    void restart_reReadsOwnPendingEntriesOfEveryPartition() {
        List<String> ids = publish(12);
        assertThat(readAsGhost("g", "c1")).isEqualTo(12); // c1's earlier run read them and died
        for (int p = 0; p < N; p++) {
            assertThat(pending(p, "g")).hasSize(3);
        }
        bus.subscribe(topic, "g", "c1", events::record, options().build()); // minIdle 60 s: no takeover
        Wait.until("own pending handled", WAIT, () -> events.calls() >= 12 && pelEmptyEverywhere("g"));
        assertThat(events.calls()).isEqualTo(12);
        // The ghost read them without starting a handler: this is their first start (a delivery counts when
        // a handler starts, docs/architecture.md, rule 13).
        assertThat(events.deliveryCounts()).containsOnly(1L);
        assertThat(events.deliveries.stream().map(Delivery::streamId)).containsExactlyInAnyOrderElementsOf(ids);

        List<String> more = publish(4); // and then new entries of every partition
        Wait.until("new ones handled", WAIT, () -> events.calls() >= 16 && pelEmptyEverywhere("g"));
        assertThat(events.deliveries.subList(12, 16).stream().map(Delivery::streamId))
                .containsExactlyInAnyOrderElementsOf(more);
    }

    @Test
    void takeover_ofADeadConsumersEntriesOnEveryPartition() {
        List<String> ids = publish(8);
        assertThat(readAsGhost("g", "ghost")).isEqualTo(8);
        bus.subscribe(topic, "g", "c2", events::record, options().minIdle(Duration.ofMillis(100)).build());
        Wait.until("taken over and handled", WAIT, () -> events.calls() >= 8 && pelEmptyEverywhere("g"));
        assertThat(events.calls()).isEqualTo(8);
        // The ghost read them without starting a handler: this is their first start (a delivery counts when
        // a handler starts, docs/architecture.md, rule 13).
        assertThat(events.deliveryCounts()).containsOnly(1L);
        assertThat(events.deliveries.stream().map(Delivery::streamId)).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(events.deliveries).allMatch(d -> d.consumer().equals("c2"));
    }

    @Test
    void keepAlive_renewsHeldEntriesOfEveryPartition() {
        Duration minIdle = Duration.ofSeconds(1);
        Duration keepAlive = Duration.ofMillis(100);
        List<String> ids = publish(4); // one per partition
        assertThat(ids.stream().map(PartitionedTopicTest::partitionOf)).containsExactlyInAnyOrder(0, 1, 2, 3);
        CountDownLatch started = new CountDownLatch(4);
        bus.subscribe(topic, "g", "slow", d -> {
            events.record(d);
            started.countDown();
            Thread.sleep(minIdle.multipliedBy(3).toMillis()); // the behaviour under test: long handlers
        }, options().concurrency(4).minIdle(minIdle).keepAliveInterval(keepAlive).build());
        Wait.until("slow handlers started", WAIT, () -> started.getCount() == 0);
        Recorder other = new Recorder();
        bus.subscribe(topic, "g", "eager", other::record, options().minIdle(minIdle).keepAliveInterval(keepAlive)
                .build());
        Wait.until("acked by the slow consumer", WAIT, () -> pelEmptyEverywhere("g"));
        assertThat(events.calls()).isEqualTo(4);
        assertThat(other.calls()).isZero();
        assertThat(events.claimLost).isEmpty();
    }

    @Test
    void claimLost_isReportedWithQualifiedIds_andNoOutcomeIsApplied() throws Exception {
        List<String> ids = publish(4);
        CountDownLatch started = new CountDownLatch(4);
        CountDownLatch release = new CountDownLatch(1);
        Subscription sub = bus.subscribe(topic, "g", "c1", d -> {
            events.record(d);
            started.countDown();
            release.await();
        }, options().concurrency(4).minIdle(Duration.ofSeconds(10)).keepAliveInterval(Duration.ofMillis(100))
                .build());
        Wait.until("handlers started", WAIT, () -> started.getCount() == 0);
        for (String id : ids) {
            redis().xclaim(stream(partitionOf(id)), Consumer.from("g", "thief"),
                    io.lettuce.core.XClaimArgs.Builder.minIdleTime(0), plain(id));
        }
        Wait.until("claims lost", WAIT, () -> events.claimLost.size() == 4);
        release.countDown();
        assertThat(events.claimLost).containsExactlyInAnyOrderElementsOf(ids);
        Wait.until("handlers done", WAIT, () -> sub.inFlight() == 0);
        for (String id : ids) {
            List<PendingMessage> pel = pending(partitionOf(id), "g");
            assertThat(pel).hasSize(1);
            assertThat(pel.get(0).getId()).isEqualTo(plain(id));
            assertThat(pel.get(0).getConsumer()).isEqualTo("thief");
        }
    }

    @Test
    void poison_goesToItsPartitionsDeadStream_andReplayGoesBackThere_forTheGroupThatGaveUpOnly() {
        AtomicBoolean broken = new AtomicBoolean(true);
        Recorder audit = new Recorder();
        bus.subscribe(topic, "audit", "a1", audit::record, options().build());
        // The poison's retry waits for minIdle. With one live consumer nothing else runs twice unless the consumer
        // pauses longer than minIdle between Redis delivering an entry and its hold or keep-alive
        // (docs/architecture.md, "Duplicate executions"), and a busy host stalls replies for 100-200 ms: so 1 s.
        bus.subscribe(topic, "g", "c1", d -> {
            events.record(d);
            if (d.message().id().equals("poison") && broken.get()) {
                throw new IllegalStateException("bug");
            }
        }, options().maxDeliveries(2).minIdle(Duration.ofSeconds(1)).build());
        List<String> others = publish(8);
        String id = bus.publisher().publish(topic, Message.builder("t", new byte[0]).id("poison").key("user-42")
                .build());
        int p = Partitioner.partitionOf("user-42", N);
        assertThat(partitionOf(id)).isEqualTo(p);

        Wait.until("dead-lettered", WAIT, () -> events.deadLetters.size() == 1);
        Wait.until("the rest handled", WAIT, () -> pelEmptyEverywhere("g") && pelEmptyEverywhere("audit")
                && audit.calls() == 9);
        DeadLetter dl = events.deadLetters.get(0);
        assertThat(dl.originalStreamId()).isEqualTo(id);
        assertThat(partitionOf(dl.id())).isEqualTo(p);
        assertThat(dl.topic()).isEqualTo(topic);
        for (int q = 0; q < N; q++) {
            assertThat(redis().xlen(dead(q))).as("dead letters of partition " + q).isEqualTo(q == p ? 1 : 0);
        }
        StreamMessage<String, String> raw = redis().xrange(dead(p), Range.create("-", "+")).get(0);
        assertThat(raw.getId()).isEqualTo(plain(dl.id()));
        assertThat(raw.getBody()).containsEntry("dl:stream_id", plain(id)).containsEntry("dl:topic", topic);
        assertThat(bus.deadLetters().list(topic, null, 10)).containsExactly(dl);
        assertThat(bus.deadLetters().get(topic, dl.id())).contains(dl);
        assertThat(bus.deadLetters().count(topic)).isEqualTo(1);
        assertThat(events.calls()).isEqualTo(8 + 2);

        broken.set(false);
        long lengthBefore = redis().xlen(stream(p));
        String replayedAs = bus.deadLetters().replay(topic, dl.id());
        assertThat(partitionOf(replayedAs)).isEqualTo(p);
        assertThat(redis().xlen(stream(p))).isEqualTo(lengthBefore + 1);
        Wait.until("replay handled and acked", WAIT, () -> events.calls() == 11 && pelEmptyEverywhere("g"));
        assertThat(events.deliveries.get(10).streamId()).isEqualTo(replayedAs);
        assertThat(events.deliveries.get(10).message().id()).isEqualTo("poison");
        assertThatThrownBy(() -> bus.deadLetters().replay(topic, dl.id()))
                .isInstanceOf(DeadLetterAlreadyReplayedException.class).hasMessageContaining(replayedAs);
        assertThat(bus.deadLetters().get(topic, dl.id()).orElseThrow().replayedAs()).contains(replayedAs);

        // The audit group acks the replay on that partition without running its handler (for_group).
        Wait.until("audit acked the replay unseen", WAIT, () -> pelEmptyEverywhere("audit")
                && redis().xinfoGroups(stream(p)).stream().map(String::valueOf)
                        .anyMatch(g -> g.contains("audit") && g.contains(plain(replayedAs))));
        assertThat(audit.calls()).isEqualTo(9);
        assertThat(others).hasSize(8);
    }

    @Test
    void deadLetters_listMergesPartitionsInOrder_pagesByQualifiedId_andRefusesBadIds() {
        bus.subscribe(topic, "g", "c1", d -> {
            throw new IllegalStateException("no");
        }, options().maxDeliveries(1).build());
        publish(10);
        Wait.until("all dead-lettered", WAIT, () -> bus.deadLetters().count(topic) == 10);
        List<DeadLetter> all = bus.deadLetters().list(topic, null, 100);
        assertThat(all).hasSize(10);
        assertThat(all.stream().map(DeadLetter::id)).doesNotHaveDuplicates().allMatch(i -> i.contains("@"));
        assertThat(all.stream().map(d -> partitionOf(d.id())).collect(Collectors.toSet()))
                .containsExactlyInAnyOrder(0, 1, 2, 3);
        for (int i = 1; i < all.size(); i++) {
            String a = plain(all.get(i - 1).id());
            String b = plain(all.get(i).id());
            int byId = compareStreamIds(a, b);
            assertThat(byId < 0 || byId == 0 && partitionOf(all.get(i - 1).id()) < partitionOf(all.get(i).id()))
                    .as(all.get(i - 1).id() + " before " + all.get(i).id()).isTrue();
        }
        List<DeadLetter> paged = new ArrayList<>();
        String after = null;
        for (List<DeadLetter> page = bus.deadLetters().list(topic, null, 3); !page.isEmpty();
             page = bus.deadLetters().list(topic, after, 3)) {
            paged.addAll(page);
            after = page.get(page.size() - 1).id();
        }
        assertThat(paged).isEqualTo(all);

        assertThatThrownBy(() -> bus.deadLetters().get(topic, plain(all.get(0).id())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("4 partitions");
        assertThatThrownBy(() -> bus.deadLetters().replay(topic, plain(all.get(0).id()) + "@9"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partitions 0 to 3");
        assertThatThrownBy(() -> bus.inspector().pendingEntry(topic, "g", "1-0"))
                .isInstanceOf(IllegalArgumentException.class);

        assertThat(bus.deadLetters().purge(topic, all.get(0).id())).isTrue();
        assertThat(bus.deadLetters().purge(topic, all.get(0).id())).isFalse();
        assertThat(redis().xlen(dead(partitionOf(all.get(0).id())))).isEqualTo(
                all.stream().filter(d -> partitionOf(d.id()) == partitionOf(all.get(0).id())).count() - 1);
        assertThat(bus.deadLetters().purgeAll(topic)).isEqualTo(9);
        assertThat(bus.deadLetters().count(topic)).isZero();
    }

    /**
     * One partition's dead letters, paged by that partition's own ids: each partition's listing holds exactly its
     * dead letters of the merged listing, in the same order (the runs layer's PartitionedSweepTest shows why a
     * reader keeps a place per partition).
     */
    @Test
    void deadLetters_listPartitionPagesOnePartitionByItsOwnIds() {
        bus.subscribe(topic, "g", "c1", d -> {
            throw new IllegalStateException("no");
        }, options().maxDeliveries(1).build());
        publish(10);
        Wait.until("all dead-lettered", WAIT, () -> bus.deadLetters().count(topic) == 10);
        List<DeadLetter> all = bus.deadLetters().list(topic, null, 100);
        assertThat(bus.deadLetters().partitions(topic)).isEqualTo(N);
        List<String> places = new ArrayList<>();
        for (int q = 0; q < N; q++) {
            int partition = q;
            List<DeadLetter> paged = new ArrayList<>();
            String after = null;
            for (List<DeadLetter> page = bus.deadLetters().listPartition(topic, q, null, 2); !page.isEmpty();
                 page = bus.deadLetters().listPartition(topic, partition, after, 2)) {
                paged.addAll(page);
                after = page.get(page.size() - 1).id();
            }
            assertThat(paged).isEqualTo(all.stream().filter(d -> partitionOf(d.id()) == partition).toList());
            places.add(after);
        }
        assertThat(places).doesNotContainNull(); // unkeyed messages went round every partition

        assertThatThrownBy(() -> bus.deadLetters().listPartition(topic, N, null, 10))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partitions 0 to 3");
        assertThatThrownBy(() -> bus.deadLetters().listPartition(topic, 0, "1-0@1", 10))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names partition 1");
    }

    private static int compareStreamIds(String a, String b) {
        String[] x = a.split("-");
        String[] y = b.split("-");
        int c = Long.compare(Long.parseLong(x[0]), Long.parseLong(y[0]));
        return c != 0 ? c : Long.compare(Long.parseLong(x[1]), Long.parseLong(y[1]));
    }

    // ---------------------------------------------------------------- inspector

    @Test
    void inspector_aggregatesPartitions_andShowsEachPartition() throws Exception {
        List<String> ids = publish(8); // two per partition
        CountDownLatch release = new CountDownLatch(1);
        bus.subscribe(topic, "g", "c1", d -> {
            events.record(d);
            release.await();
        }, options().concurrency(8).build());
        Wait.until("all 8 held", WAIT, () -> events.calls() == 8);
        // A lease as an ordered group's owner writes it: "<token> <consumer> <acquired at, epoch ms>".
        List<String> time = redis().time();
        long now = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
        redis().psetex(prefix + ":{" + partitionName(1) + "}:lease:g", 5000, "7 c9 " + (now - 1000));
        try {
            Inspector inspector = bus.inspector();
            Inspector.StreamInfo s = inspector.stream(topic).orElseThrow();
            assertThat(s.length()).isEqualTo(8);
            assertThat(s.groups()).isEqualTo(1);
            assertThat(s.deadLetters()).isZero();
            assertThat(ids).contains(s.firstId(), s.lastId());
            assertThat(inspector.streams()).anyMatch(i -> i.topic().equals(topic) && i.length() == 8);

            Inspector.GroupInfo g = inspector.groups(topic).get(0);
            assertThat(inspector.groups(topic)).hasSize(1);
            assertThat(g.name()).isEqualTo("g");
            assertThat(g.pending()).isEqualTo(8);
            assertThat(g.consumers()).isEqualTo(1);
            assertThat(g.lag()).isZero();
            assertThat(ids).contains(g.lastDeliveredId());

            Inspector.ConsumerInfo c = inspector.consumers(topic, "g").get(0);
            assertThat(inspector.consumers(topic, "g")).hasSize(1);
            assertThat(c.name()).isEqualTo("c1");
            assertThat(c.pending()).isEqualTo(8);

            List<Inspector.PendingEntry> pending = inspector.pending(topic, "g", 100);
            assertThat(pending.stream().map(Inspector.PendingEntry::streamId))
                    .containsExactlyInAnyOrderElementsOf(ids);
            assertThat(inspector.pending(topic, "g", 3).stream().map(Inspector.PendingEntry::streamId))
                    .containsExactlyElementsOf(pending.subList(0, 3).stream().map(Inspector.PendingEntry::streamId)
                            .toList());
            assertThat(inspector.pendingEntry(topic, "g", ids.get(5)).orElseThrow().consumer()).isEqualTo("c1");

            List<Inspector.PartitionInfo> parts = inspector.partitions(topic, "g");
            assertThat(parts).hasSize(N);
            for (Inspector.PartitionInfo p : parts) {
                assertThat(p.streamKey()).isEqualTo(stream(p.partition()));
                assertThat(p.length()).isEqualTo(2);
                assertThat(p.pending()).isEqualTo(2);
                assertThat(p.lag()).isZero();
                if (p.partition() == 1) {
                    assertThat(p.owner()).isEqualTo("c9");
                    assertThat(p.fencingToken()).isEqualTo(7);
                    assertThat(p.leaseAgeMillis()).isBetween(1000L, 60_000L);
                    assertThat(p.leaseExpiresInMillis()).isBetween(1L, 5000L);
                } else {
                    assertThat(p.owner()).isNull();
                    assertThat(p.fencingToken()).isZero();
                    assertThat(p.leaseAgeMillis()).isEqualTo(-1);
                    assertThat(p.leaseExpiresInMillis()).isEqualTo(-1);
                }
            }
        } finally {
            release.countDown();
        }
        Wait.until("acked on every partition", WAIT, () -> pelEmptyEverywhere("g"));
        assertThat(bus.inspector().groups(topic).get(0).pending()).isZero();
    }

    @Test
    void plainTopic_hasOnePartitionInThePartitionsView() {
        bus.publisher().publish("plain", Message.of("t", new byte[0]));
        List<Inspector.PartitionInfo> parts = bus.inspector().partitions("plain", "nobody");
        assertThat(parts).hasSize(1);
        assertThat(parts.get(0).streamKey()).isEqualTo(prefix + ":{plain}:stream");
        assertThat(parts.get(0).length()).isEqualTo(1);
        assertThat(parts.get(0).lag()).isEqualTo(-1); // no such group
    }

    // ---------------------------------------------------------------- consumers

    @Test
    void pruneDeadConsumers_deletesAGhostFromEveryPartitionsGroup_onlyWithoutPendingEntries() {
        publish(4);
        for (int p = 0; p < N; p++) {
            try {
                redis().xgroupCreate(XReadArgs.StreamOffset.from(stream(p), "0"), "g",
                        XGroupCreateArgs.Builder.mkstream());
            } catch (RedisBusyException exists) {
                // fine
            }
            redis().xgroupCreateconsumer(stream(p), Consumer.from("g", "ghost"));
        }
        // ghost2 holds one entry, on partition 2 only.
        redis().xreadgroup(Consumer.from("g", "ghost2"), XReadArgs.Builder.count(1),
                XReadArgs.StreamOffset.lastConsumed(stream(2)));
        Bus janitor = newBus(new Recorder(), N, Duration.ofMillis(500));
        Wait.until("ghosts dead", WAIT, () -> janitor.inspector().consumers(topic, "g").stream()
                .noneMatch(Inspector.ConsumerInfo::alive));
        assertThat(janitor.inspector().consumers(topic, "g").stream().filter(c -> c.name().equals("ghost2"))
                .findFirst().orElseThrow().pending()).isEqualTo(1);
        assertThat(janitor.pruneDeadConsumers(topic, "g")).containsExactly("ghost");
        for (int p = 0; p < N; p++) {
            // XINFO CONSUMERS: one list per consumer, [name, <name>, pending, <n>, ...]
            assertThat(redis().xinfoConsumers(stream(p), "g").stream().map(c -> String.valueOf(((List<?>) c).get(1))))
                    .as("partition " + p).doesNotContain("ghost");
        }
        assertThat(janitor.inspector().consumers(topic, "g").stream().map(Inspector.ConsumerInfo::name))
                .containsExactly("ghost2");
    }

    // ---------------------------------------------------------------- partition counts

    @Test
    void anotherPartitionCount_isAClearError_andWritesNothing() {
        publish(4);
        Set<String> before = keysUnderPrefix();
        Bus two = newBus(new Recorder(), 2, Duration.ofMinutes(10));
        assertThatThrownBy(() -> two.publisher().publish(topic, msg(1))).isInstanceOf(RunbusException.class)
                .hasMessageContaining("has 4 partitions").hasMessageContaining("configured with 2");
        assertThatThrownBy(() -> two.subscribe(topic, "g2", "c1", d -> { }, options().build()))
                .isInstanceOf(RunbusException.class).hasMessageContaining("has 4 partitions");
        assertThat(keysUnderPrefix()).isEqualTo(before);
        for (int p = 0; p < N; p++) {
            assertThat(redis().xlen(stream(p))).isEqualTo(1);
        }
    }

    @Test
    void aTopicThatExistsUnpartitioned_cannotBeOpenedWithFourPartitions() {
        Bus plain = newBus(new Recorder(), 1, Duration.ofMinutes(10));
        plain.publisher().publish("legacy", msg(1));
        Set<String> before = keysUnderPrefix();
        Bus four = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix).partitions("legacy", 4).build());
        extraBuses.add(four);
        assertThatThrownBy(() -> four.publisher().publish("legacy", msg(2))).isInstanceOf(RunbusException.class)
                .hasMessageContaining("has 1 partition ").hasMessageContaining("configured with 4");
        assertThatThrownBy(() -> four.subscribe("legacy", "g", "c1", d -> { }, options().build()))
                .isInstanceOf(RunbusException.class);
        assertThat(keysUnderPrefix()).isEqualTo(before).noneMatch(k -> k.contains("legacy#"));
        assertThat(redis().xlen(prefix + ":{legacy}:stream")).isEqualTo(1);
    }
}
