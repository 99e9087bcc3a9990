package dev.runbus;

import static dev.runbus.testkit.Deployment.CLUSTER;
import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static dev.runbus.testkit.Deployment.SENTINEL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.runbus.testing.DyingConsumer;
import dev.runbus.testing.Recorder;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XClaimArgs;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;

/**
 * The delivery rules (docs/architecture.md, rules 1–7) against a real Redis, on every deployment: the machine's Redis
 * (XAUTOCLAIM's three-element reply), Redis 6.2 (two elements, nil entries), a cluster (every command to its key's
 * master, every script on one slot; the cases that cut connections through a proxy reach the master of the topic's
 * slot through it) and Sentinels. The cases that restart or flush a server run on a server of their own, of the
 * deployment's version.
 */
@OnDeployments({LOCAL, REDIS_62, CLUSTER, SENTINEL})
class BusBehaviourTest {

    static final Duration WAIT = Duration.ofSeconds(20);
    /**
     * {@code minIdle} of the cases that count a failing entry's retries by takeover exactly: a claim or read reply that
     * takes longer than {@code minIdle} lets the reclaimer take an entry while its first copy is on its way, and it
     * runs twice (docs/architecture.md, Duplicate executions); at 100 ms a busy host does that (BatchHandlerTest).
     */
    static final Duration RETRY_BY_TAKEOVER = Duration.ofSeconds(1);

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    /** Starts a Redis of the test's own, of the version this suite runs on: for tests that flush it. */
    OwnRedis startOwnRedis() {
        return deployment.ownRedis();
    }

    /**
     * The deployment is what it says: on the machine's Redis, version 7 or later (reported skipped when nothing
     * answered at the test URL and the tests' own server is the embedded 6.2); the others by their shape.
     */
    @Test
    void runsOnItsDeployment() {
        switch (deployment) {
            case LOCAL -> {
                int major = Integer.parseInt(target().version().split("\\.")[0]);
                assumeTrue(major >= 7 || !TestServers.startedOwnRedis(),
                        "no Redis 7 on this machine: the suite ran on the tests' own Redis " + target().version());
                assertThat(major).isGreaterThanOrEqualTo(7);
            }
            case REDIS_62 -> assertThat(target().version()).startsWith("6.2.");
            case CLUSTER -> {
                assertThat(target().uri()).startsWith("redis-cluster://");
                assertThat(target().redis().clusterInfo()).contains("cluster_state:ok", "cluster_known_nodes:6");
            }
            case SENTINEL -> {
                assertThat(target().uri()).startsWith("redis-sentinel://").endsWith("#runbus");
                assertThat(target().redis().info("replication")).contains("role:master", "connected_slaves:1");
            }
            default -> throw new AssertionError("no check for " + deployment);
        }
    }

    String prefix;
    String topic;
    Recorder events;
    Bus bus;
    List<Bus> extraBuses = new ArrayList<>();
    /** The test's own Redis, when it started one; closed after the buses. */
    OwnRedis own;

    @BeforeEach
    void setUp() {
        prefix = "rbtest-" + UUID.randomUUID().toString().substring(0, 8);
        topic = "orders";
        events = new Recorder();
        bus = newBus(events);
    }

    @AfterEach
    void tearDown() {
        extraBuses.forEach(Bus::close);
        bus.close();
        target().deleteKeys(prefix);
        if (own != null) {
            own.close();
        }
    }

    Bus newBus(BusListener listener) {
        return newBus(listener, Duration.ofMinutes(10));
    }

    Bus newBus(BusListener listener, Duration consumerDeadAfter) {
        Bus b = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix).listener(listener)
                .heartbeatInterval(Duration.ofMillis(100)).consumerDeadAfter(consumerDeadAfter).build());
        if (bus != null) {
            extraBuses.add(b);
        }
        return b;
    }

    /** Short block time so close is quick; no takeover unless a test shortens minIdle. */
    static SubscribeOptions.Builder options() {
        return SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).minIdle(Duration.ofSeconds(60))
                .claimInterval(Duration.ofMillis(50));
    }

    String stream() {
        return prefix + ":{" + topic + "}:stream";
    }

    /** The start record of a group (handler starts by entry id), as a consumer writes it before its handler starts. */
    String starts(String group) {
        return prefix + ":{" + topic + "}:starts:" + group;
    }

    /**
     * The server a test reaches through a proxy, with a plain redis:// URL. On a cluster that is one master, which
     * answers only for its own slots: the topic is then one whose keys share that master with the topic registry.
     */
    io.lettuce.core.RedisURI proxiedServer() {
        io.lettuce.core.RedisURI registry = target().serverOf(prefix + ":topics");
        for (int i = 0; target().isCluster(); i++) {
            String candidate = "orders-" + i;
            io.lettuce.core.RedisURI server = target().serverOf(candidate);
            if (server.getHost().equals(registry.getHost()) && server.getPort() == registry.getPort()) {
                topic = candidate;
                break;
            }
        }
        return registry;
    }

    RedisClusterCommands<String, String> redis() {
        return target().redis();
    }

    static Message msg(int i) {
        return Message.builder("order.created", ("payload-" + i).getBytes(StandardCharsets.UTF_8))
                .id("m-" + i).header("tenant", "t" + (i % 3)).build();
    }

    List<String> publish(int n) {
        return bus.publisher().publishAll(topic, IntStream.range(0, n).mapToObj(BusBehaviourTest::msg)
                .collect(Collectors.toList()));
    }

    List<PendingMessage> pending(String group) {
        return redis().xpending(stream(), group, Range.create("-", "+"), Limit.from(1000));
    }

    /** Creates the group and reads entries as a consumer of another (now dead) process would have. */
    List<StreamMessage<String, String>> readAsGhost(String group, String consumer, int count) {
        try {
            redis().xgroupCreate(XReadArgs.StreamOffset.from(stream(), "0"), group,
                    io.lettuce.core.XGroupCreateArgs.Builder.mkstream());
        } catch (io.lettuce.core.RedisBusyException exists) {
            // fine
        }
        return redis().xreadgroup(Consumer.from(group, consumer), XReadArgs.Builder.count(count),
                XReadArgs.StreamOffset.lastConsumed(stream()));
    }

    // ---------------------------------------------------------------- distribution

    @Test
    void workQueue_eachMessageHandledExactlyOnceAcrossThreeConsumers() {
        int n = 600;
        Map<String, Set<String>> byConsumer = new ConcurrentHashMap<>();
        // Each consumer's first handler waits until all three have one: a consumer holds at most its slots
        // (concurrency x batch size), so the stream is left to the others and each must take a share. Without the
        // wait, two consumers on a busy machine could drain the 600 entries before the third's first read.
        CountDownLatch everyConsumerStarted = new CountDownLatch(3);
        for (int c = 1; c <= 3; c++) {
            String name = "c" + c;
            bus.subscribe(topic, "workers", name, d -> {
                events.record(d);
                byConsumer.computeIfAbsent(name, k -> {
                    everyConsumerStarted.countDown();
                    return ConcurrentHashMap.newKeySet();
                }).add(d.message().id());
                everyConsumerStarted.await(WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            }, options().concurrency(4).batchSize(20).build());
        }
        List<String> ids = publish(n);
        assertThat(ids).hasSize(n).doesNotHaveDuplicates();

        Wait.until("all " + n + " handled", WAIT, () -> events.calls() >= n);
        Wait.until("PEL empty", WAIT, () -> pending("workers").isEmpty());
        assertThat(events.calls()).isEqualTo(n);
        assertThat(events.callsByMessageId).hasSize(n);
        assertThat(events.callsByMessageId.values()).allMatch(c -> c.get() == 1);
        assertThat(events.deliveryCounts()).containsOnly(1L);
        assertThat(byConsumer.values().stream().mapToInt(Set::size).sum()).isEqualTo(n);
        assertThat(byConsumer).hasSize(3); // every consumer took a share
    }

    @Test
    void aFastDrainLeavesNoStartRecordBehind() {
        // A start record sent before a handler could reach Redis after the entry's ack: an ack can leave from a
        // reply's callback on the client's I/O thread, ahead of writes other threads queued there. New entries get
        // their first start with a plain HSET, so each ack waits until its record is answered (Acker); without that
        // wait, a quick drain of 200,000 entries left 23,000 to 51,000 fields. A no-op handler acks as fast as it
        // can, while earlier acks are still on the wire.
        int n = 3000;
        publish(n);
        bus.subscribe(topic, "g", "c1", events::record, options().concurrency(1).batchSize(100).build());
        Wait.until("all " + n + " handled", WAIT, () -> events.calls() >= n);
        Wait.until("PEL empty", WAIT, () -> pending("g").isEmpty());
        assertThat(redis().hkeys(starts("g"))).as("start-record fields left after every ack").isEmpty();
        assertThat(events.calls()).isEqualTo(n);
    }

    @Test
    void fanOut_twoGroupsEachSeeEveryMessage() {
        int n = 200;
        Recorder billing = new Recorder();
        Recorder shipping = new Recorder();
        bus.subscribe(topic, "billing", "b1", billing::record, options().build());
        bus.subscribe(topic, "shipping", "s1", shipping::record, options().build());
        publish(n);
        Wait.until("both groups handled all", WAIT, () -> billing.calls() >= n && shipping.calls() >= n);
        Wait.until("both PELs empty", WAIT, () -> pending("billing").isEmpty() && pending("shipping").isEmpty());
        assertThat(billing.callsByMessageId).hasSize(n);
        assertThat(shipping.callsByMessageId).hasSize(n);
        assertThat(billing.calls()).isEqualTo(n);
        assertThat(shipping.calls()).isEqualTo(n);
    }

    @Test
    void publishedMessageArrivesWhole() {
        Message sent = Message.builder("invoice.paid", new byte[] {0, 1, 2, (byte) 255}).id("inv-7")
                .header("trace", "abc").header("tenant", "acme").build();
        String streamId = bus.publisher().publish(topic, sent);
        bus.subscribe(topic, "g", "c1", events::record, options().build());
        Wait.until("delivered", WAIT, () -> events.calls() == 1);
        Delivery d = events.deliveries.get(0);
        assertThat(d.message()).isEqualTo(sent);
        assertThat(d.streamId()).isEqualTo(streamId);
        assertThat(d.topic()).isEqualTo(topic);
        assertThat(d.group()).isEqualTo("g");
        assertThat(d.consumer()).isEqualTo("c1");
        assertThat(d.deliveryCount()).isEqualTo(1);
    }

    // ---------------------------------------------------------------- failure and takeover

    @Test
    void throwingHandler_leavesEntryPendingWithOwnerAndDeliveryCount() {
        String id = bus.publisher().publish(topic, msg(1));
        bus.subscribe(topic, "g", "c1", d -> {
            events.record(d);
            throw new IllegalStateException("boom");
        }, options().build());
        Wait.until("failure reported", WAIT, () -> events.failures.size() == 1);
        assertThat(events.failures).containsExactly(id + ":1:RETRY");
        List<PendingMessage> pel = pending("g");
        assertThat(pel).hasSize(1);
        assertThat(pel.get(0).getId()).isEqualTo(id);
        assertThat(pel.get(0).getConsumer()).isEqualTo("c1");
        assertThat(pel.get(0).getRedeliveryCount()).isEqualTo(1);
        assertThat(events.calls()).isEqualTo(1);
        assertThat(events.deadLetters).isEmpty();
    }

    @Test
    void consumerKilledMidHandler_anotherTakesTheEntryAfterMinIdleWithDeliveryCountTwo() throws Exception {
        String id = bus.publisher().publish(topic, msg(1));
        long minIdle = 1500;
        try (ChildJvm child = ChildJvm.start(DyingConsumer.class, target().uri(), prefix, topic, "g", "doomed",
                Long.toString(minIdle))) {
            assertThat(child.awaitLine("HANDLING", WAIT)).isEqualTo("HANDLING " + id);
            // A first delivery's start is recorded without waiting (StartRecorder): killed before the
            // record reaches Redis, the entry is rightly delivered as a first delivery again. This test is about
            // a handler that did start, so it kills once the start is on record.
            Wait.until("the start recorded", WAIT, () -> redis().hexists(starts("g"), id));
            child.kill();
        }
        // How long the entry had been idle (since the dead consumer last renewed its claim) when the kill was
        // done, as Redis counts it: a starved child may have renewed it long before it was killed. The clock starts
        // before the read is sent, not after its reply came back: Redis counted that idle time somewhere in between,
        // so the sum below can only overstate the idle time, never understate it by the reply's way back (taken
        // after the reply, a loaded machine once made it 1,496 ms for an entry Redis handed over at 1,500). Whole
        // milliseconds are rounded up for the same reason: Redis counts idle time in its own whole milliseconds.
        long readAt = System.nanoTime();
        long idleAtKill = pending("g").get(0).getMsSinceLastDelivery();
        bus.subscribe(topic, "g", "survivor", events::record,
                options().minIdle(Duration.ofMillis(minIdle)).build());
        Wait.until("taken over", WAIT, () -> events.calls() == 1);
        long idleWhenTaken = idleAtKill + (System.nanoTime() - readAt + 999_999) / 1_000_000;
        Delivery d = events.deliveries.get(0);
        assertThat(d.streamId()).isEqualTo(id);
        assertThat(d.deliveryCount()).isEqualTo(2);
        assertThat(d.consumer()).isEqualTo("survivor");
        Wait.until("acked", WAIT, () -> pending("g").isEmpty());
        // Not before minIdle: the dead consumer's claim had to expire first. Bounded from above: the idle time
        // read plus the time since before the read is at least the entry's idle time when it was taken over.
        assertThat(idleWhenTaken).as("ms the entry had been idle when taken over").isGreaterThanOrEqualTo(minIdle);
    }

    @Test
    void keepAlive_handlerRunningThreeTimesMinIdleIsNotTakenOver() {
        // renewed every 100 ms against a minIdle of a second: a stall of most of a second is tolerated
        Duration minIdle = Duration.ofSeconds(1);
        Duration keepAlive = Duration.ofMillis(100);
        String id = bus.publisher().publish(topic, msg(1));
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger slowCalls = new AtomicInteger();
        bus.subscribe(topic, "g", "slow", d -> {
            slowCalls.incrementAndGet();
            started.countDown();
            Thread.sleep(minIdle.multipliedBy(3).toMillis()); // the behaviour under test: a long handler
        }, options().minIdle(minIdle).keepAliveInterval(keepAlive).build());
        Wait.until("slow handler started", WAIT, () -> started.getCount() == 0);
        Recorder other = new Recorder();
        bus.subscribe(topic, "g", "eager", other::record, options().minIdle(minIdle).keepAliveInterval(keepAlive)
                .build());

        Wait.until("acked by the slow consumer", WAIT, () -> pending("g").isEmpty());
        assertThat(slowCalls.get()).isEqualTo(1);
        assertThat(other.calls()).isZero();
        assertThat(events.claimLost).isEmpty();
        assertThat(id).isNotNull();
    }

    // ---------------------------------------------------------------- poison

    @Test
    void poison_alwaysThrowingHandlerRunsMaxDeliveriesTimesThenIsDeadLettered() {
        Message poison = msg(42);
        String id = bus.publisher().publish(topic, poison);
        bus.subscribe(topic, "g", "c1", d -> {
            events.record(d);
            throw new IllegalArgumentException("cannot parse order 42");
        }, options().minIdle(RETRY_BY_TAKEOVER).maxDeliveries(3).build());

        Wait.until("dead-lettered", WAIT, () -> events.deadLetters.size() == 1);
        assertThat(events.calls()).isEqualTo(3);
        assertThat(events.deliveryCounts()).containsExactly(1L, 2L, 3L);
        assertThat(events.failures).containsExactly(id + ":1:RETRY", id + ":2:RETRY", id + ":3:DEAD_LETTER");
        assertThat(pending("g")).isEmpty();

        String dlKey = prefix + ":{" + topic + "}:dead";
        List<StreamMessage<String, String>> raw = redis().xrange(dlKey, Range.create("-", "+"));
        assertThat(raw).hasSize(1);
        Map<String, String> f = raw.get(0).getBody();
        assertThat(f).containsEntry("dl:topic", topic).containsEntry("dl:stream_id", id)
                .containsEntry("dl:group", "g").containsEntry("dl:consumer", "c1")
                .containsEntry("dl:deliveries", "3")
                .containsEntry("dl:reason", "java.lang.IllegalArgumentException: cannot parse order 42")
                .containsKey("dl:at")
                .containsEntry("id", "m-42").containsEntry("type", "order.created")
                .containsEntry("payload", "payload-42").containsEntry("h:tenant", "t0")
                .containsEntry("published_at", Long.toString(poison.publishedAt().toEpochMilli()));

        DeadLetter dl = bus.deadLetters().list(topic, null, 10).get(0);
        assertThat(dl).isEqualTo(events.deadLetters.get(0));
        assertThat(dl.message()).isEqualTo(poison);
        assertThat(dl.replayedAs()).isEmpty();
        assertThat(bus.deadLetters().count(topic)).isEqualTo(1);
    }

    @Test
    void poison_reclaimerDeadLettersAnEntryWhoseOwnersDiedOnIt() {
        String id = bus.publisher().publish(topic, msg(7));
        readAsGhost("g", "ghost", 10);
        // More deliveries that never finished: the count passes maxDeliveries, the last of them alone, with a dead
        // owner. A delivery counts when a handler starts (docs/architecture.md, rule 13), so the ghost records its
        // four starts as a consumer does.
        redis().xclaim(stream(), Consumer.from("g", "ghost"), XClaimArgs.Builder.minIdleTime(0), id);
        redis().xclaim(stream(), Consumer.from("g", "ghost"), XClaimArgs.Builder.minIdleTime(0), id);
        redis().xclaim(stream(), Consumer.from("g", "ghost"), XClaimArgs.Builder.minIdleTime(0), id);
        redis().hset(starts("g"), id, "4");
        assertThat(pending("g").get(0).getRedeliveryCount()).isEqualTo(4);
        // Idle well past minIdle before the first round: reclaim.lua reads the owners (XPENDING … IDLE) just before
        // it claims (XAUTOCLAIM), and on Redis 7.0 the clock moves between the two, so an entry crossing minIdle
        // right then is claimed with its owner unknown (loaded run 31 on 55865cf, on the cluster).
        Wait.until("the ghost's entry idle 500 ms", WAIT, () -> pending("g").get(0).getMsSinceLastDelivery() >= 500);

        bus.subscribe(topic, "g", "c1", events::record,
                options().minIdle(Duration.ofMillis(100)).maxDeliveries(3).build());
        Wait.until("dead-lettered", WAIT, () -> events.deadLetters.size() == 1);
        DeadLetter dl = events.deadLetters.get(0);
        assertThat(dl.originalStreamId()).isEqualTo(id);
        assertThat(dl.reason()).isEqualTo("abandoned 4 times, last owner ghost");
        assertThat(dl.deliveries()).isEqualTo(5);
        assertThat(dl.message().id()).isEqualTo("m-7");
        assertThat(events.calls()).isZero();
        assertThat(pending("g")).isEmpty();
        Wait.until("its start record removed", WAIT, () -> redis().exists(starts("g")) == 0);
    }

    /**
     * An entry whose owners died on it maxDeliveries times (each death counts the start of every handler running in
     * the process, so it may only have run beside the one that killed it) runs once more, alone among the bus's
     * handlers: none runs beside it, and it is handled, not dead-lettered.
     */
    @Test
    void poison_anEntryStartedMaxDeliveriesTimesRunsOnceMoreAlone() throws Exception {
        String id = bus.publisher().publish(topic, msg(7));
        readAsGhost("g", "ghost", 10);
        redis().hset(starts("g"), id, "3");
        Set<String> all = new HashSet<>(List.of(id));
        for (int i = 0; i < 40; i++) {
            all.add(bus.publisher().publish(topic, msg(100 + i)));
        }
        AtomicInteger running = new AtomicInteger();
        AtomicBoolean aloneRuns = new AtomicBoolean();
        AtomicInteger beside = new AtomicInteger();
        bus.subscribe(topic, "g", "c1", d -> {
            int now = running.incrementAndGet();
            try {
                if (d.streamId().equals(id)) {
                    aloneRuns.set(true);
                    beside.addAndGet(now - 1);
                    Thread.sleep(300); // work, during which no other handler may start
                    beside.addAndGet(running.get() - 1);
                    aloneRuns.set(false);
                } else {
                    if (aloneRuns.get()) {
                        beside.incrementAndGet();
                    }
                    Thread.sleep(20);
                }
                events.record(d);
            } finally {
                running.decrementAndGet();
            }
        }, options().minIdle(Duration.ofSeconds(1)).maxDeliveries(3).concurrency(4).build());
        // Every entry handled, counted by id: at-least-once lets an entry whose claim a pause took run again (at a
        // minIdle of 100 ms a loaded machine did that, and a count of exactly 41 was never reached).
        Wait.until("all 41 handled and acked", WAIT, () -> events.deliveries.stream().map(Delivery::streamId)
                .collect(java.util.stream.Collectors.toSet()).containsAll(all) && pending("g").isEmpty());
        Delivery alone = events.deliveries.stream().filter(d -> d.streamId().equals(id)).findFirst().orElseThrow();
        assertThat(alone.attempt()).as("its attempt").isEqualTo(4);
        assertThat(beside).as("handlers running beside it").hasValue(0);
        assertThat(events.deadLetters).isEmpty();
    }

    @Test
    void replay_reachesTheHandlerAgainOnce_andOnlyForTheGroupThatGaveUp() {
        AtomicBoolean broken = new AtomicBoolean(true);
        Recorder audit = new Recorder();
        bus.subscribe(topic, "audit", "a1", audit::record, options().build());
        bus.subscribe(topic, "g", "c1", d -> {
            events.record(d);
            if (broken.get()) {
                throw new IllegalStateException("bug");
            }
        }, options().minIdle(RETRY_BY_TAKEOVER).maxDeliveries(2).build());
        String id = bus.publisher().publish(topic, msg(5));
        Wait.until("dead-lettered", WAIT, () -> events.deadLetters.size() == 1);
        Wait.until("audit handled", WAIT, () -> audit.calls() == 1 && pending("audit").isEmpty());
        String deadId = events.deadLetters.get(0).id();

        broken.set(false);
        String replayedAs = bus.deadLetters().replay(topic, deadId);
        Wait.until("replayed delivery handled and acked", WAIT,
                () -> events.calls() == 3 && pending("g").isEmpty());
        Delivery again = events.deliveries.get(2);
        assertThat(again.streamId()).isEqualTo(replayedAs).isNotEqualTo(id);
        assertThat(again.message().id()).isEqualTo("m-5");
        assertThat(again.deliveryCount()).isEqualTo(1);

        assertThatThrownBy(() -> bus.deadLetters().replay(topic, deadId))
                .isInstanceOf(DeadLetterAlreadyReplayedException.class).hasMessageContaining(replayedAs);
        assertThat(bus.deadLetters().get(topic, deadId).orElseThrow().replayedAs()).contains(replayedAs);

        // The audit group had acked the original: it acks the replay without running its handler.
        Wait.until("audit acked the replay unseen", WAIT, () -> pending("audit").isEmpty()
                && bus.inspector().groups(topic).stream().filter(g -> g.name().equals("audit"))
                        .allMatch(g -> g.lastDeliveredId().equals(replayedAs)));
        assertThat(audit.calls()).isEqualTo(1);
        assertThat(events.calls()).isEqualTo(3);
    }

    @Test
    void deadLetters_unknownIdIsAClearError_andPurgeRemoves() {
        assertThatThrownBy(() -> bus.deadLetters().replay(topic, "1-1"))
                .isInstanceOf(NoSuchDeadLetterException.class).hasMessageContaining("1-1");
        bus.subscribe(topic, "g", "c1", d -> {
            throw new IllegalStateException("no");
        }, options().maxDeliveries(1).build());
        publish(3);
        Wait.until("three dead letters", WAIT, () -> events.deadLetters.size() == 3);
        List<DeadLetter> all = bus.deadLetters().list(topic, null, 10);
        assertThat(all).hasSize(3);
        assertThat(bus.deadLetters().list(topic, all.get(0).id(), 10)).hasSize(2);
        assertThat(bus.deadLetters().purge(topic, all.get(0).id())).isTrue();
        assertThat(bus.deadLetters().purge(topic, all.get(0).id())).isFalse();
        assertThat(bus.deadLetters().purgeAll(topic)).isEqualTo(2);
        assertThat(bus.deadLetters().count(topic)).isZero();
    }

    // ---------------------------------------------------------------- restart, trimming, janitor

    @Test
    void restartWithSameName_processesOwnPendingEntriesFirst() {
        List<String> old = publish(5);
        assertThat(readAsGhost("g", "c1", 5)).hasSize(5); // an earlier run of c1 read them and died
        List<String> fresh = bus.publisher().publishAll(topic, List.of(msg(100), msg(101)));

        List<List<String>> calls = new CopyOnWriteArrayList<>();
        bus.subscribeBatch(topic, "g", "c1", b -> {
            calls.add(b.deliveries().stream().map(Delivery::streamId).collect(Collectors.toList()));
            b.deliveries().forEach(events::record);
        }, options().concurrency(1).batchSize(10).build());
        Wait.until("all handled", WAIT, () -> events.calls() == 7);
        // One runner, reads of ten: the re-read of c1's own pending entries is the first call, the new entries the
        // next. A batch call's starts are recorded before it, awaited, so the calls come in the order of the reads;
        // a handler of one entry may run a re-read entry after a new one, when its start record was slow and it
        // waited aside (loaded run 62).
        assertThat(calls).containsExactly(old, fresh);
        // The earlier run read them but started no handler on them: a delivery counts when a handler starts
        // (docs/architecture.md, rule 13), so each is on its first delivery, as the PEL's count of 2 would not say.
        assertThat(events.deliveryCounts()).containsExactly(1L, 1L, 1L, 1L, 1L, 1L, 1L);
        Wait.until("PEL empty", WAIT, () -> pending("g").isEmpty());
    }

    @Test
    void trimmedWhilePending_onTakeover_isAckedAndReportedNotRetried() {
        List<String> ids = publish(3);
        readAsGhost("g", "ghost", 3);
        redis().xdel(stream(), ids.get(0), ids.get(1));

        bus.subscribe(topic, "g", "c1", events::record, options().minIdle(Duration.ofMillis(100)).build());
        Wait.until("survivor handled and PEL empty", WAIT, () -> events.calls() == 1 && pending("g").isEmpty());
        assertThat(events.deliveries.get(0).streamId()).isEqualTo(ids.get(2));
        assertThat(events.trimmed).containsExactlyInAnyOrder(ids.get(0), ids.get(1));
    }

    @Test
    void trimmedWhilePending_onOwnRecovery_isAckedAndReported() {
        List<String> ids = publish(3);
        readAsGhost("g", "c1", 3);
        redis().xtrim(stream(), 1); // keeps only the newest entry

        bus.subscribe(topic, "g", "c1", events::record, options().build());
        Wait.until("survivor handled and PEL empty", WAIT, () -> events.calls() == 1 && pending("g").isEmpty());
        assertThat(events.deliveries.get(0).streamId()).isEqualTo(ids.get(2));
        assertThat(events.trimmed).containsExactlyInAnyOrder(ids.get(0), ids.get(1));
    }

    @Test
    void janitor_deletesDeadConsumersOnlyWhenTheirPelIsEmpty() {
        // Heartbeats every 100 ms against 1.5 s: the live consumer never looks dead, even through a long stall.
        Bus janitorBus = newBus(BusListener.NONE, Duration.ofMillis(1500));
        List<String> ids = publish(2);
        readAsGhost("g", "dead-with-pending", 1);
        readAsGhost("g", "dead-and-done", 1);
        redis().xack(stream(), "g", ids.get(1));
        janitorBus.subscribe(topic, "g", "alive", d -> { }, options().build());

        Wait.until("ghosts idle past consumerDeadAfter", WAIT, () -> janitorBus.inspector().consumers(topic, "g")
                .stream().filter(c -> c.name().startsWith("dead")).allMatch(c -> c.idleMillis() > 1600));
        List<String> deleted = janitorBus.pruneDeadConsumers(topic, "g");
        assertThat(deleted).containsExactly("dead-and-done");
        Set<String> left = janitorBus.inspector().consumers(topic, "g").stream().map(Inspector.ConsumerInfo::name)
                .collect(Collectors.toSet());
        assertThat(left).containsExactlyInAnyOrder("dead-with-pending", "alive");
        assertThat(pending("g")).extracting(PendingMessage::getConsumer).containsExactly("dead-with-pending");
    }

    /** A bus whose heartbeats are 2 s apart, so that a name counts as in use for 4 s whatever the machine's load. */
    Bus slowBeatingBus(BusListener listener) {
        Bus b = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix).listener(listener)
                .heartbeatInterval(Duration.ofSeconds(2)).consumerDeadAfter(Duration.ofMinutes(10)).build());
        extraBuses.add(b);
        return b;
    }

    @Test
    void aConsumerNameUsedByAnotherLiveProcess_isReportedAndTheSubscriptionStillStarts() {
        Recorder first = new Recorder();
        Recorder second = new Recorder();
        Bus firstProcess = slowBeatingBus(first);
        Subscription original = firstProcess.subscribe(topic, "g", "same-name", d -> { }, options().build());
        firstProcess.subscribe(topic, "g2", "other-name", d -> { }, options().build());
        assertThat(first.namesInUse).isEmpty();

        Bus secondProcess = slowBeatingBus(second);
        secondProcess.subscribe(topic, "g", "same-name", second::record, options().build());
        assertThat(second.namesInUse).containsExactly(topic + "/g/same-name");
        // the same name in another group is another consumer
        secondProcess.subscribe(topic, "g3", "other-name", d -> { }, options().build());
        assertThat(second.namesInUse).hasSize(1);

        original.close();
        publish(1);
        Wait.until("the second process's subscription delivers", WAIT, () -> second.calls() == 1);
    }

    @Test
    void heartbeatsEveryMillisecond_neverReportANewNameNorOutliveAClose() {
        // The periodic write races a new name's check and a closed name's removal; with a 1 ms interval an
        // unordered implementation reported about 1 name in 100 and left about 1 heartbeat in 200.
        own = startOwnRedis(); // it flushes the server's scripts
        Recorder recorder = new Recorder();
        Bus b = Bus.connect(BusConfig.builder(own.uri()).keyPrefix(prefix).listener(recorder)
                .heartbeatInterval(Duration.ofMillis(1)).consumerDeadAfter(Duration.ofMinutes(10)).build());
        extraBuses.add(b);
        b.subscribe(topic, "g", "keeps-the-loop-busy", d -> { }, options().build());
        for (int i = 0; i < 60; i++) {
            if (i % 20 == 10) {
                own.flushScripts(); // a heartbeat answered NOSCRIPT (or Function not found) must still keep its order
            }
            b.subscribe(topic, "g", "short-lived-" + i, d -> { }, options().build()).close();
        }
        assertThat(recorder.namesInUse).isEmpty();
        Wait.until("no closed consumer keeps a heartbeat", WAIT,
                () -> own.redis().zrange(prefix + ":{" + topic + "}:heartbeats:g", 0, -1).equals(
                        List.of("keeps-the-loop-busy")));
    }

    @Test
    void aHeartbeatOlderThanTwoIntervals_isNotReported() {
        // a process that died a minute ago under this name: its heartbeat is stale, its start is a restart
        List<String> time = redis().time(); // heartbeats are stamped with the Redis clock
        long now = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
        redis().zadd(prefix + ":{" + topic + "}:heartbeats:g", now - 60_000, "crashed");
        redis().zadd(prefix + ":{" + topic + "}:heartbeats:g", now - 1_000, "just-now");
        Recorder restarted = new Recorder();
        Bus b = slowBeatingBus(restarted);
        b.subscribe(topic, "g", "crashed", d -> { }, options().build());
        assertThat(restarted.namesInUse).isEmpty();
        b.subscribe(topic, "g", "just-now", d -> { }, options().build()); // 1 s < two 2 s intervals
        assertThat(restarted.namesInUse).containsExactly(topic + "/g/just-now");
    }

    @Test
    void aConsumerNameFreedByACleanClose_isNotReportedOnRestart() {
        Recorder first = new Recorder();
        Subscription s = slowBeatingBus(first).subscribe(topic, "g", "restarting", d -> { }, options().build());
        assertThat(redis().zscore(prefix + ":{" + topic + "}:heartbeats:g", "restarting")).isNotNull();
        s.close();
        // removed without waiting, so that a close is never held up by it
        Wait.until("the closed consumer's heartbeat is removed", WAIT,
                () -> redis().zscore(prefix + ":{" + topic + "}:heartbeats:g", "restarting") == null);

        Recorder restarted = new Recorder();
        slowBeatingBus(restarted).subscribe(topic, "g", "restarting", d -> { }, options().build());
        assertThat(restarted.namesInUse).isEmpty();

        // closing the whole bus, which closes its connection right after, removes the heartbeat too
        Bus whole = slowBeatingBus(BusListener.NONE);
        whole.subscribe(topic, "g", "bus-closed", d -> { }, options().build());
        whole.close();
        Wait.until("the closed bus's consumer heartbeat is removed", WAIT,
                () -> redis().zscore(prefix + ":{" + topic + "}:heartbeats:g", "bus-closed") == null);
    }

    // ---------------------------------------------------------------- close

    @Test
    void scriptsFlushedFromTheServer_areSentWholeAgain() {
        own = startOwnRedis(); // it flushes the server's scripts
        Bus b = Bus.connect(BusConfig.builder(own.uri()).keyPrefix(prefix).listener(events).build());
        extraBuses.add(b);
        String id = b.publisher().publish(topic, msg(1));
        own.flushScripts(); // as after a restart or failover: EVALSHA answers NOSCRIPT, FCALL Function not found
        b.subscribe(topic, "g", "c1", d -> {
            throw new IllegalStateException("poison");
        }, options().maxDeliveries(1).build());
        Wait.until("dead-lettered through the script sent whole (or the library loaded again)", WAIT, () -> events.deadLetters.size() == 1);
        assertThat(events.deadLetters.get(0).originalStreamId()).isEqualTo(id);
        assertThat(own.redis().xpending(stream(), "g", Range.create("-", "+"), Limit.from(10))).isEmpty();
    }

    @Test
    void gracefulClose_makesTheDeadLetterMovesAlreadyDecided() {
        List<String> ids = publish(50);
        CountDownLatch allFailed = new CountDownLatch(50);
        Subscription sub = bus.subscribe(topic, "g", "c1", d -> {
            allFailed.countDown();
            throw new IllegalStateException("poison");
        }, options().concurrency(4).maxDeliveries(1).build());
        Wait.until("every handler failed", WAIT, () -> allFailed.getCount() == 0);
        sub.close();
        // The moves were queued by the handler threads; close made every one of them before it returned.
        assertThat(pending("g")).isEmpty();
        assertThat(bus.deadLetters().count(topic)).isEqualTo(50);
        assertThat(events.deadLetters).extracting(DeadLetter::originalStreamId).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(sub.inFlight()).isZero();
    }

    @Test
    void gracefulClose_losesNothing() {
        int n = 300;
        publish(n);
        AtomicInteger handled = new AtomicInteger();
        Set<String> seen = ConcurrentHashMap.newKeySet();
        Handler slow = d -> {
            Thread.sleep(2); // work that takes time, so close lands mid-stream
            seen.add(d.message().id());
            handled.incrementAndGet();
        };
        Subscription first = bus.subscribe(topic, "g", "c1", slow, options().concurrency(4).batchSize(20).build());
        Wait.until("some handled", WAIT, () -> handled.get() >= 50);
        first.close();
        int afterFirst = handled.get();
        assertThat(afterFirst).isLessThan(n);
        // Everything read was finished and acked before close returned: nothing of c1 is left pending.
        assertThat(pending("g")).isEmpty();
        assertThat(first.inFlight()).isZero();

        bus.subscribe(topic, "g", "c1", slow, options().concurrency(4).batchSize(20).build());
        Wait.until("all handled", WAIT, () -> seen.size() == n);
        Wait.until("PEL empty", WAIT, () -> pending("g").isEmpty());
        assertThat(handled.get()).isEqualTo(n);
    }

    @Test
    void ackBeforeWork_optIn_acksEvenWhenTheHandlerFails() {
        bus.subscribe(topic, "telemetry", "t1", d -> {
            events.record(d);
            throw new IllegalStateException("dropped on purpose");
        }, options().ackMode(AckMode.BEFORE_WORK).minIdle(Duration.ofMillis(100)).build());
        publish(5);
        Wait.until("handled", WAIT, () -> events.calls() == 5);
        Wait.until("PEL empty", WAIT, () -> pending("telemetry").isEmpty());
        assertThat(events.deadLetters).isEmpty();
        assertThat(events.calls()).isEqualTo(5);
    }

    // ---------------------------------------------------------------- regressions of races and edge cases

    @Test
    void restartWithIdleOwnEntries_readLoopAndReclaimerDoNotBothDeliverThem() {
        int n = 200;
        List<String> ids = publish(n);
        readAsGhost("g", "c1", n);
        // A second delivery that also never finished: every entry sits at count 2, idle for a minute, owned by
        // c1, so a reclaimer started too early would take every entry the read loop has not re-read yet.
        redis().xclaim(stream(), Consumer.from("g", "c1"), XClaimArgs.Builder.minIdleTime(0)
                .idle(Duration.ofMinutes(1)), ids.toArray(new String[0]));
        // Both deliveries started a handler (recorded as a consumer records them): the next one is the third.
        ids.forEach(id -> redis().hset(starts("g"), id, "2"));

        // minIdle far above the keep-alive interval: a stalled keep-alive must not look like a second delivery
        bus.subscribe(topic, "g", "c1", events::record, options().batchSize(10).concurrency(2)
                .minIdle(Duration.ofSeconds(3)).keepAliveInterval(Duration.ofMillis(200)).maxDeliveries(3).build());
        Wait.until("all handled and acked", WAIT, () -> events.callsByMessageId.size() == n && pending("g").isEmpty());
        assertThat(events.deadLetters).isEmpty();
        assertThat(events.calls()).isEqualTo(n);
        assertThat(events.deliveryCounts()).containsOnly(3L);
    }

    @Test
    void deadLetterOfAnExtremelyWideEntry_isTruncatedNotLost() {
        Map<String, String> fields = new java.util.LinkedHashMap<>();
        fields.put("id", "wide");
        for (int i = 0; i < 4100; i++) {
            fields.put("h:k" + i, "v");
        }
        String id = redis().xadd(stream(), fields);
        bus.subscribe(topic, "g", "c1", d -> {
            throw new IllegalStateException("no");
        }, options().maxDeliveries(1).build());
        Wait.until("dead-lettered", WAIT, () -> events.deadLetters.size() == 1);
        assertThat(pending("g")).isEmpty();
        Map<String, String> dl = redis().xrange(prefix + ":{" + topic + "}:dead", Range.create("-", "+")).get(0)
                .getBody();
        assertThat(dl).containsEntry("dl:stream_id", id).containsEntry("dl:truncated", "4101")
                .containsEntry("id", "wide");
        assertThat(bus.deadLetters().list(topic, null, 10)).hasSize(1); // still readable
    }

    @Test
    void closePastShutdownTimeout_appliesNoOutcomeToHandlersStillRunning() throws Exception {
        String id = bus.publisher().publish(topic, msg(1));
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        Subscription sub = bus.subscribe(topic, "g", "c1", d -> {
            started.countDown();
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                interrupted.set(true);
                throw e;
            }
        }, options().maxDeliveries(1).shutdownTimeout(Duration.ofMillis(300)).build());
        Wait.until("handler started", WAIT, () -> started.getCount() == 0);
        sub.close();
        Wait.until("handler interrupted", WAIT, interrupted::get);
        // The interrupted handler "failed" on its last allowed delivery, yet nothing was dead-lettered or acked.
        assertThat(events.deadLetters).isEmpty();
        assertThat(events.failures).isEmpty();
        assertThat(pending("g")).extracting(PendingMessage::getId).containsExactly(id);
    }

    @Test
    void closePastShutdownTimeout_startsNoQueuedEntryOnASuppliedExecutor() throws Exception {
        publish(5);
        java.util.concurrent.ThreadPoolExecutor pool = (java.util.concurrent.ThreadPoolExecutor)
                java.util.concurrent.Executors.newFixedThreadPool(1);
        CountDownLatch release = new CountDownLatch(1);
        try {
            Subscription sub = bus.subscribe(topic, "g", "c1", d -> {
                events.record(d);
                release.await();
            }, options().concurrency(1).executor(pool).shutdownTimeout(Duration.ofMillis(200)).build());
            Wait.until("first handler running", WAIT, () -> events.calls() == 1);
            sub.close();
            release.countDown();
            Wait.until("runner ended", WAIT, () -> pool.getActiveCount() == 0);
            assertThat(events.calls()).isEqualTo(1);
            assertThat(pending("g")).hasSize(5); // nothing acked after close: all five stay pending
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void listenerThrowingAnError_doesNotKillHandlerRunners() {
        Recorder seen = new Recorder();
        Bus fragile = newBus(new BusListener() {
            @Override
            public void onHandlerFailure(Delivery delivery, Throwable failure, Outcome outcome) {
                throw new AssertionError("listener bug");
            }
        });
        Set<String> failedOnce = ConcurrentHashMap.newKeySet();
        fragile.subscribe(topic, "g", "c1", d -> {
            if (failedOnce.add(d.message().id())) {
                throw new IllegalStateException("first attempt fails");
            }
            seen.record(d);
        }, options().concurrency(1).minIdle(Duration.ofMillis(100)).maxDeliveries(5).build());
        publish(6);
        Wait.until("all six eventually handled", WAIT, () -> seen.callsByMessageId.size() == 6);
        Wait.until("PEL empty", WAIT, () -> pending("g").isEmpty());
    }

    @Test
    void inFlightCountsHeldEntriesNotReservedSlots() {
        Subscription sub = bus.subscribe(topic, "g", "c1", d -> { }, options().build());
        publish(3);
        Wait.until("acked", WAIT, () -> redis().xlen(stream()) == 3 && pending("g").isEmpty()
                && bus.inspector().groups(topic).get(0).lastDeliveredId() != null
                && !bus.inspector().groups(topic).get(0).lastDeliveredId().equals("0-0"));
        Wait.until("nothing held", WAIT, () -> sub.inFlight() == 0);
    }

    // ---------------------------------------------------------------- liveness (issue 10)

    @Test
    void defect1_handlerLeavingItsInterruptFlagSet_killsNoRunnerAndFailsNothing() {
        int n = 1000;
        int concurrency = 4;
        AtomicInteger startedInterrupted = new AtomicInteger();
        CountDownLatch allRunnersBusy = new CountDownLatch(concurrency);
        AtomicInteger sawAllRunners = new AtomicInteger();
        bus.subscribe(topic, "g", "c1", d -> {
            if (Thread.currentThread().isInterrupted()) {
                startedInterrupted.incrementAndGet();
                throw new IllegalStateException("started with the interrupt flag of an earlier call");
            }
            events.record(d);
            if (d.message().id().startsWith("late-")) {
                // one late message per runner: all of them must be running at once
                allRunnersBusy.countDown();
                if (allRunnersBusy.await(WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                    sawAllRunners.incrementAndGet();
                }
            }
            Thread.currentThread().interrupt(); // the interrupt-then-throw idiom, or a watchdog racing the return
        }, options().concurrency(concurrency).batchSize(50).build());
        publish(n);
        Wait.until("all " + n + " handled", WAIT, () -> events.callsByMessageId.size() == n);

        bus.publisher().publishAll(topic, IntStream.range(0, concurrency).mapToObj(i -> Message.builder("late",
                new byte[0]).id("late-" + i).build()).collect(Collectors.toList()));
        Wait.until("the late messages handled and everything acked", WAIT,
                () -> events.callsByMessageId.size() == n + concurrency && pending("g").isEmpty());
        assertThat(sawAllRunners).hasValue(concurrency);
        assertThat(startedInterrupted).hasValue(0);
        assertThat(events.failures).isEmpty();
        assertThat(events.calls()).isEqualTo(n + concurrency);
    }

    @Test
    void defect1_batchHandlerLeavingItsInterruptFlagSet_killsNoRunner() {
        int n = 1000;
        AtomicInteger startedInterrupted = new AtomicInteger();
        bus.subscribeBatch(topic, "g", "c1", batch -> {
            if (Thread.currentThread().isInterrupted()) {
                startedInterrupted.incrementAndGet();
                throw new IllegalStateException("started with the interrupt flag of an earlier call");
            }
            batch.deliveries().forEach(events::record);
            Thread.currentThread().interrupt();
        }, options().concurrency(4).batchSize(20).build());
        publish(n);
        Wait.until("all " + n + " handled and acked", WAIT,
                () -> events.callsByMessageId.size() == n && pending("g").isEmpty());
        String late = bus.publisher().publish(topic, msg(n));
        Wait.until("a later message handled and acked", WAIT,
                () -> events.callsByMessageId.size() == n + 1 && pending("g").isEmpty());
        assertThat(events.deliveries.get(n).streamId()).isEqualTo(late);
        assertThat(startedInterrupted).hasValue(0);
        assertThat(events.failures).isEmpty();
        assertThat(events.calls()).isEqualTo(n + 1);
    }

    @Test
    void defect5_aRunWhoseClaimWasLost_doesNotSettleTheRunThatTookTheEntryBack() {
        String id = bus.publisher().publish(topic, msg(1));
        CountDownLatch firstMayEnd = new CountDownLatch(1);
        CountDownLatch secondMayEnd = new CountDownLatch(1);
        AtomicInteger runsOfId = new AtomicInteger();
        Subscription sub = bus.subscribe(topic, "g", "c1", d -> {
            events.record(d);
            if (d.streamId().equals(id)) {
                (runsOfId.incrementAndGet() == 1 ? firstMayEnd : secondMayEnd).await();
            }
        }, options().concurrency(2).minIdle(Duration.ofSeconds(5)).keepAliveInterval(Duration.ofMillis(100))
                .maxDeliveries(10).build());
        Wait.until("first run started", WAIT, () -> runsOfId.get() == 1);

        // Another consumer takes the entry: c1's keep-alive finds its claim lost and lets go of its hold.
        redis().xclaim(stream(), Consumer.from("g", "thief"), XClaimArgs.Builder.minIdleTime(0), id);
        Wait.until("claim lost reported", WAIT, () -> events.claimLost.contains(id));
        // The thief goes quiet: c1's reclaimer takes the entry back and runs it again while the first run goes on.
        redis().xclaim(stream(), Consumer.from("g", "thief"),
                XClaimArgs.Builder.minIdleTime(0).idle(Duration.ofSeconds(10)), id);
        Wait.until("second run started", WAIT, () -> runsOfId.get() == 2);
        assertThat(sub.inFlight()).isEqualTo(1);

        firstMayEnd.countDown();
        // The first run's runner is the only free one: once it handled this, the first run was settled.
        String next = bus.publisher().publish(topic, msg(2));
        Wait.until("the next message handled and acked", WAIT, () -> events.calls() == 3
                && pending("g").stream().noneMatch(p -> p.getId().equals(next)));
        assertThat(pending("g")).extracting(PendingMessage::getId, PendingMessage::getConsumer)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(id, "c1"));
        assertThat(sub.inFlight()).isEqualTo(1);
        // The second run is still kept alive: its claim is renewed after the first run ended.
        long firstSettled = System.nanoTime();
        Wait.until("the second run's claim renewed", WAIT, () -> pending("g").stream().anyMatch(p ->
                p.getId().equals(id) && p.getMsSinceLastDelivery() + 20 < (System.nanoTime() - firstSettled) / 1_000_000));

        secondMayEnd.countDown();
        Wait.until("acked by the second run", WAIT, () -> pending("g").isEmpty() && sub.inFlight() == 0);
        assertThat(events.claimLost).containsExactly(id);
        assertThat(events.deadLetters).isEmpty();
        assertThat(events.failures).isEmpty();
    }

    /**
     * An entry a consumer that acks after work started (and died on) carries a start field; a consumer of the same
     * group that acks before work and takes it over removes the field with its ack, as every ack does.
     */
    @Test
    void ackBeforeWork_takingOverAnEntryStartedBefore_removesItsStartField() {
        String id = bus.publisher().publish(topic, msg(1));
        readAsGhost("g", "ghost", 10);
        redis().hset(starts("g"), id, "1");
        bus.subscribe(topic, "g", "t1", events::record, options().ackMode(AckMode.BEFORE_WORK)
                .minIdle(Duration.ofMillis(100)).build());
        Wait.until("taken over, handled and acked", WAIT, () -> events.calls() == 1 && pending("g").isEmpty());
        assertThat(redis().exists(starts("g"))).as("start record").isZero();
    }

    @Test
    void defect6_ackBeforeWork_aHandlerLongerThanKeepAliveReportsNoLostClaim() {
        AtomicBoolean finished = new AtomicBoolean();
        bus.subscribe(topic, "telemetry", "t1", d -> {
            events.record(d);
            Thread.sleep(600); // the behaviour under test: a handler running through several keep-alive rounds
            finished.set(true);
        }, options().ackMode(AckMode.BEFORE_WORK).minIdle(Duration.ofMillis(200))
                .keepAliveInterval(Duration.ofMillis(50)).build());
        publish(1);
        Wait.until("handler finished", WAIT, finished::get);
        assertThat(pending("telemetry")).isEmpty();
        assertThat(events.claimLost).isEmpty();
        assertThat(events.calls()).isEqualTo(1);
    }

    @Test
    void defect7_entryDeletedWhileItsHandlerRuns_isReportedAndNoLongerKeptAlive() {
        String id = bus.publisher().publish(topic, msg(1));
        CountDownLatch mayEnd = new CountDownLatch(1);
        Subscription sub = bus.subscribe(topic, "g", "c1", d -> {
            events.record(d);
            if (d.streamId().equals(id)) {
                mayEnd.await();
            }
        }, options().concurrency(1).minIdle(Duration.ofSeconds(5)).keepAliveInterval(Duration.ofMillis(100))
                .claimInterval(Duration.ofMinutes(5)).build());
        // The reclaimer looks at the start and then not for minutes: this is about the keep-alive finding the
        // deleted entry (Redis 7.0's XAUTOCLAIM drops a deleted entry whatever its idle time, which the reclaimer
        // then reports, and that path must end the same way).
        Wait.until("handler started and the reclaimer's first scan done", WAIT, () -> events.calls() == 1
                && reclaimerIsBetweenScans("runbus-reclaim-" + topic + "/g/c1"));
        redis().xdel(stream(), id);

        Wait.until("reported trimmed while pending", WAIT, () -> events.trimmed.contains(id));
        assertThat(sub.inFlight()).isZero();
        assertThat(pending("g")).isEmpty(); // acked by the keep-alive, so nobody tries it again
        mayEnd.countDown();
        String next = bus.publisher().publish(topic, msg(2));
        Wait.until("the next message handled and acked", WAIT, () -> events.calls() == 2 && pending("g").isEmpty());
        assertThat(events.deliveries.get(1).streamId()).isEqualTo(next);
        assertThat(events.trimmed).containsExactly(id);
        assertThat(events.claimLost).isEmpty();
        assertThat(events.failures).isEmpty();
    }

    /**
     * An entry whose hold went while it waited for a runner (deleted from the stream, found and acked by the
     * keep-alive) is another delivery's or gone: its handler never starts.
     */
    @Test
    void anEntryDeletedWhileQueuedBehindABusyRunner_neverReachesItsHandler() {
        String first = bus.publisher().publish(topic, msg(1));
        String queued = bus.publisher().publish(topic, msg(2));
        CountDownLatch mayEnd = new CountDownLatch(1);
        Subscription sub = bus.subscribe(topic, "g", "c1", d -> {
            events.record(d);
            if (d.streamId().equals(first)) {
                mayEnd.await();
            }
        }, options().concurrency(1).batchSize(2).minIdle(Duration.ofSeconds(5))
                .keepAliveInterval(Duration.ofMillis(100)).claimInterval(Duration.ofMinutes(5)).build());
        Wait.until("the first handler started, the second entry held behind it", WAIT,
                () -> events.calls() == 1 && sub.inFlight() == 2
                        && reclaimerIsBetweenScans("runbus-reclaim-" + topic + "/g/c1"));
        redis().xdel(stream(), queued);

        Wait.until("the queued entry reported trimmed", WAIT, () -> events.trimmed.contains(queued));
        mayEnd.countDown();
        String next = bus.publisher().publish(topic, msg(3));
        Wait.until("the next message handled and acked", WAIT, () -> events.deliveries.stream()
                .anyMatch(d -> d.streamId().equals(next)) && pending("g").isEmpty());
        assertThat(events.deliveries).extracting(Delivery::streamId).containsExactly(first, next);
        assertThat(redis().exists(starts("g"))).as("start record").isZero();
    }

    /** True when the reclaimer thread of that name has finished a scan and waits for the next interval. */
    static boolean reclaimerIsBetweenScans(String threadName) {
        return Thread.getAllStackTraces().entrySet().stream().anyMatch(t -> t.getKey().getName().equals(threadName)
                && java.util.Arrays.stream(t.getValue()).anyMatch(f -> f.getClassName().endsWith(".PeriodicLoop")
                        && f.getMethodName().equals("pause")));
    }

    /** The source of one of the bus's Lua scripts, to run a step of it directly against seeded state. */
    static String script(String name) {
        try (var in = BusBehaviourTest.class.getResourceAsStream("/dev/runbus/lua/" + name + ".lua")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs dead_letter.lua once for entry {@code id} as the call named {@code token}. */
    String deadLetterCall(String id, String token) {
        return redis().eval(script("dead_letter"), io.lettuce.core.ScriptOutputType.VALUE,
                new String[] {stream(), prefix + ":{" + topic + "}:dead", prefix + ":{" + topic + "}:dead:call:" + token,
                        starts("g")},
                "g", id, topic, "c1", "1", "poison", "1700000000000", "60000");
    }

    /** Runs replay.lua once for dead letter {@code deadId} as the call named {@code token}. */
    List<Object> replayCall(String deadId, String token) {
        return redis().eval(script("replay"), io.lettuce.core.ScriptOutputType.MULTI,
                new String[] {prefix + ":{" + topic + "}:dead", prefix + ":{" + topic + "}:dead:replayed", stream()},
                deadId, token);
    }

    /** A dead letter written the way dead_letter.lua writes one. */
    /** A dead letter of the topic, whose partition count (1) is recorded as by the bus that subscribed to it. */
    String seedDeadLetter() {
        redis().set(prefix + ":{" + topic + "}:partitions", "1");
        return redis().xadd(prefix + ":{" + topic + "}:dead", Map.of("dl:topic", topic, "dl:stream_id", "1-1",
                "dl:group", "g", "dl:consumer", "c1", "dl:deliveries", "3", "dl:reason", "poison", "dl:at",
                "1700000000000", "id", "m-1", "type", "order.created", "payload", "p"));
    }

    @Test
    void defect11_deadLetterScriptSentTwice_answersTheSecondSendAsTheFirst() {
        String id = publish(1).get(0);
        readAsGhost("g", "c1", 1);
        String first = deadLetterCall(id, "call-1");
        assertThat(first).isNotNull().isNotEqualTo("trimmed");
        assertThat(deadLetterCall(id, "call-1")).isEqualTo(first); // the same call, sent again after a reconnect
        assertThat(deadLetterCall(id, "call-2")).isNull(); // another call: no longer pending
        assertThat(redis().xlen(prefix + ":{" + topic + "}:dead")).isEqualTo(1);
        assertThat(pending("g")).isEmpty();
        assertThat(redis().pttl(prefix + ":{" + topic + "}:dead:call:call-1")).isBetween(1L, 60_000L);

        String gone = bus.publisher().publish(topic, msg(2));
        readAsGhost("g", "c1", 1);
        redis().xdel(stream(), gone);
        assertThat(deadLetterCall(gone, "call-3")).isEqualTo("trimmed");
        assertThat(deadLetterCall(gone, "call-3")).isEqualTo("trimmed");
        assertThat(deadLetterCall(gone, "call-4")).isNull();
        assertThat(redis().xlen(prefix + ":{" + topic + "}:dead")).isEqualTo(1);
    }

    @Test
    void defect11_replayScriptSentTwice_answersTheSecondSendAsTheFirst() {
        String deadId = seedDeadLetter();
        List<Object> first = replayCall(deadId, "call-1");
        assertThat(first.get(0)).isEqualTo(1L);
        assertThat(replayCall(deadId, "call-1")).isEqualTo(first); // the same call, sent again after a reconnect
        assertThat(replayCall(deadId, "call-2")).containsExactly(0L, first.get(1)); // another call: a duplicate
        assertThat(redis().xrange(stream(), Range.create("-", "+"))).extracting(StreamMessage::getId)
                .containsExactly((String) first.get(1));
        assertThat(bus.deadLetters().get(topic, deadId).orElseThrow().replayedAs()).contains((String) first.get(1));
        assertThat(bus.deadLetters().purge(topic, deadId)).isTrue();
        assertThat(redis().hgetall(prefix + ":{" + topic + "}:dead:replayed")).isEmpty();
    }

    @Test
    void defect11_deadLetterMoveWhoseReplyIsLostWithTheConnection_isReportedOnce() throws Exception {
        io.lettuce.core.RedisURI server = proxiedServer();
        redis().scriptLoad(script("dead_letter")); // one EVALSHA (or FCALL: the bus loads its library at connect)
        String id = bus.publisher().publish(topic, msg(1));
        try (TcpProxy proxy = TcpProxy.start(server.getHost(), server.getPort())) {
            Bus viaProxy = Bus.connect(BusConfig.builder(proxy.uri()).keyPrefix(prefix).listener(events)
                    .consumerDeadAfter(Duration.ofMinutes(10)).build());
            extraBuses.add(viaProxy);
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch mayFail = new CountDownLatch(1);
            viaProxy.subscribe(topic, "g", "c1", d -> {
                started.countDown();
                mayFail.await();
                throw new IllegalStateException("poison");
            }, options().maxDeliveries(1).build());
            Wait.until("handler started", WAIT, () -> started.getCount() == 0);

            proxy.swallowReplies(true);
            mayFail.countDown();
            Wait.until("the move made in Redis", WAIT, () -> redis().xlen(prefix + ":{" + topic + "}:dead") == 1);
            // The answer is lost with the connection; the client reconnects and sends the script again.
            proxy.pause();
            proxy.dropConnections();
            proxy.swallowReplies(false);
            proxy.resume();

            Wait.until("the dead letter reported", WAIT, () -> events.deadLetters.size() == 1);
            assertThat(events.deadLetters.get(0).originalStreamId()).isEqualTo(id);
            Wait.until("PEL empty", WAIT, () -> pending("g").isEmpty());
            assertThat(redis().xlen(prefix + ":{" + topic + "}:dead")).isEqualTo(1);
            assertThat(events.deadLetters).hasSize(1);
            // Closed while its Redis is still reachable: behind a closed proxy its close would wait out its bounds.
            viaProxy.close();
        }
    }

    @Test
    void defect11_replayWhoseReplyIsLostWithTheConnection_isNotCalledADuplicate() throws Exception {
        io.lettuce.core.RedisURI server = proxiedServer();
        redis().scriptLoad(script("replay"));
        String deadId = seedDeadLetter();
        try (TcpProxy proxy = TcpProxy.start(server.getHost(), server.getPort())) {
            Bus viaProxy = Bus.connect(BusConfig.builder(proxy.uri()).keyPrefix(prefix).listener(events)
                    .consumerDeadAfter(Duration.ofMinutes(10)).build());
            extraBuses.add(viaProxy);
            viaProxy.deadLetters().count(topic); // connected before the fault

            proxy.swallowReplies(true);
            java.util.concurrent.CompletableFuture<String> replay = java.util.concurrent.CompletableFuture
                    .supplyAsync(() -> viaProxy.deadLetters().replay(topic, deadId));
            Wait.until("the replay made in Redis", WAIT,
                    () -> redis().hget(prefix + ":{" + topic + "}:dead:replayed", deadId) != null);
            proxy.pause();
            proxy.dropConnections();
            proxy.swallowReplies(false);
            proxy.resume();

            String replayedAs = replay.get(WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            assertThat(replayedAs).isEqualTo(redis().hget(prefix + ":{" + topic + "}:dead:replayed", deadId));
            assertThat(redis().xlen(stream())).isEqualTo(1);
        }
    }

    // ---------------------------------------------------------------- inspector and API edges

    @Test
    void inspector_showsStreamsGroupsConsumersAndPending() {
        publish(4);
        readAsGhost("g", "ghost", 3);
        Inspector.StreamInfo s = bus.inspector().streams().stream().filter(i -> i.topic().equals(topic))
                .findFirst().orElseThrow();
        assertThat(s.length()).isEqualTo(4);
        assertThat(s.groups()).isEqualTo(1);
        assertThat(s.deadLetters()).isZero();
        Inspector.GroupInfo g = bus.inspector().groups(topic).get(0);
        assertThat(g.name()).isEqualTo("g");
        assertThat(g.pending()).isEqualTo(3);
        assertThat(g.consumers()).isEqualTo(1);
        if (!target().version().startsWith("6.")) {
            assertThat(g.lag()).isEqualTo(1);
        }
        Inspector.ConsumerInfo c = bus.inspector().consumers(topic, "g").get(0);
        assertThat(c.name()).isEqualTo("ghost");
        assertThat(c.pending()).isEqualTo(3);
        assertThat(c.lastHeartbeatAt()).isEqualTo(-1);
        List<Inspector.PendingEntry> p = bus.inspector().pending(topic, "g", 10);
        assertThat(p).hasSize(3).allMatch(e -> e.consumer().equals("ghost") && e.deliveries() == 1);
    }

    @Test
    void subscribe_rejectsBadNamesAndDuplicateConsumers() {
        assertThatThrownBy(() -> bus.subscribe("a{b}", "g", "c", d -> { })).hasMessageContaining("braces");
        assertThatThrownBy(() -> bus.subscribe(topic, "my group", "c", d -> { })).hasMessageContaining("group");
        assertThatThrownBy(() -> bus.subscribe(topic, "g", "", d -> { })).hasMessageContaining("consumer");
        bus.subscribe(topic, "g", "c1", d -> { }, options().build());
        // The reclaimer starts once the consumer has re-read its own pending entries: wait for it first.
        Wait.until("reclaimer started", WAIT, () -> Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().startsWith("runbus-reclaim-")));
        long threadsBefore = runbusThreads();
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> bus.subscribe(topic, "g", "c1", d -> { }, options().build()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("already subscribed");
        }
        // A refused subscription starts no thread of its own.
        assertThat(runbusThreads()).isEqualTo(threadsBefore);
    }

    private static long runbusThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("runbus-")).count();
    }

    @Test
    void existingGroupIsUsedAsItIs() {
        List<String> ids = publish(3);
        readAsGhost("g", "other", 3); // the group exists and has delivered everything
        redis().xack(stream(), "g", ids.toArray(new String[0]));
        bus.subscribe(topic, "g", "c1", events::record, options().build());
        String fresh = bus.publisher().publish(topic, msg(9));
        Wait.until("the new message handled", WAIT, () -> events.calls() == 1);
        assertThat(events.deliveries.get(0).streamId()).isEqualTo(fresh);
    }

    @Test
    void publisherCap_trimsApproximately() {
        Publisher capped = bus.publisher(PublishOptions.cappedAt(100));
        List<Message> many = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            many.add(msg(i));
        }
        List<String> ids = capped.publishAll(topic, many);
        assertThat(new HashSet<>(ids)).hasSize(1000);
        assertThat(redis().xlen(stream())).isBetween(100L, 300L);
    }
}
