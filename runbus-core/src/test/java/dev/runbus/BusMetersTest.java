package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Replies;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The bus's Micrometer meters, counted exactly on a real Redis: every outcome of a handler, publishes, acks,
 * retries, dead letters, claims, leases, and the gauges read on their own loop.
 */
class BusMetersTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final String prefix = "test-meters-" + UUID.randomUUID();
    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final List<Bus> buses = new ArrayList<>();

    @AfterEach
    void cleanUp() {
        buses.forEach(Bus::close);
        RedisTarget.local().deleteKeys(prefix);
    }

    private Bus bus(BusConfig.Builder config) {
        Bus bus = Bus.connect(config.keyPrefix(prefix).meterRegistry(registry)
                .meterRefreshInterval(Duration.ofMillis(100)).build());
        buses.add(bus);
        return bus;
    }

    private static Message message(String body) {
        return Message.of("t", body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void countsEachOutcomePublishAckRetryAndDeadLetterAndReadsTheGauges() {
        Bus bus = bus(BusConfig.builder(RedisTarget.local().uri()));
        bus.subscribe("orders", "g", "c", d -> {
            if (new String(d.message().payload(), StandardCharsets.UTF_8).equals("bad")) {
                throw new IllegalStateException("always fails");
            }
        }, SubscribeOptions.builder().maxDeliveries(2).retryPolicy(RetryPolicy.fixed(Duration.ofMillis(50)))
                .minIdle(Duration.ofMinutes(1)).blockTime(Duration.ofMillis(200)).build());
        Publisher publisher = bus.publisher();
        for (String body : List.of("a", "b", "c", "bad")) {
            publisher.publish("orders", message(body));
        }
        publisher.publish("orders", message("later"), Duration.ofMillis(100));
        publisher.publish("orders", message("next hour"), Duration.ofHours(1));

        // The handler's outcome is counted when it is decided, the dead letter once its move is made: a moment later.
        Wait.until("four entries handled and one dead-lettered", WAIT,
                () -> handled("success") == 4 && handled("dead_letter") == 1
                        && count("runbus.dead.letters", "topic", "orders", "group", "g") >= 1);
        assertThat(handled("retry")).isEqualTo(1);
        assertThat(count("runbus.retries", "topic", "orders", "group", "g")).isEqualTo(1);
        assertThat(count("runbus.dead.letters", "topic", "orders", "group", "g")).isEqualTo(1);
        Wait.until("the four successes acked", WAIT, () -> count("runbus.acks", "topic", "orders", "group", "g") == 4);
        assertThat(count("runbus.published", "topic", "orders")).isEqualTo(4);
        assertThat(count("runbus.scheduled", "topic", "orders")).isEqualTo(2);
        Timer publishes = registry.find("runbus.publish.duration").tags("topic", "orders", "kind", "now",
                "outcome", "success").timer();
        assertThat(publishes.count()).isEqualTo(4);
        assertThat(registry.find("runbus.publish.duration").tags("kind", "delayed").timer().count()).isEqualTo(2);
        assertThat(count("runbus.claims", "topic", "orders", "group", "g")).isZero();
        assertThat(count("runbus.claims.lost", "topic", "orders", "group", "g")).isZero();
        assertThat(registry.find("runbus.trimmed.while.pending").tags("topic", "orders", "group", "g").counter())
                .as("shown at zero before anything happens").isNotNull();

        // 4 published, the delayed one moved in, and the retry's copy: 6 entries; the dead letter; the one
        // scheduled for the next hour; nothing pending or unread.
        Wait.until("the gauges read", WAIT, () -> gauge("runbus.stream.length", "topic", "orders") == 6
                && gauge("runbus.dead.letter.depth", "topic", "orders") == 1
                && gauge("runbus.scheduled.depth", "topic", "orders") == 1
                && gauge("runbus.group.pending", "topic", "orders", "group", "g") == 0
                && gauge("runbus.group.lag", "topic", "orders", "group", "g") == 0);
        assertThat(gauge("runbus.redis.up")).isEqualTo(1);
        assertThat(count("runbus.loop.errors")).isZero();
    }

    @Test
    void countsTheEntriesTheReclaimerTakesOver() {
        String stream = new Keys(prefix).stream("jobs");
        var redis = RedisTarget.local().redis();
        redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g", XGroupCreateArgs.Builder.mkstream(true));
        Bus bus = bus(BusConfig.builder(RedisTarget.local().uri()));
        bus.publisher().publish("jobs", message("one"));
        bus.publisher().publish("jobs", message("two"));
        // A consumer that read both and died on them.
        assertThat(redis.xreadgroup(Consumer.from("g", "gone"), XReadArgs.StreamOffset.lastConsumed(stream)))
                .hasSize(2);

        bus.subscribe("jobs", "g", "c", d -> {
        }, SubscribeOptions.builder().minIdle(Duration.ofMillis(200)).claimInterval(Duration.ofMillis(100))
                .blockTime(Duration.ofMillis(200)).build());

        Wait.until("both taken over and acked", WAIT, () -> count("runbus.acks", "topic", "jobs", "group", "g") == 2);
        assertThat(count("runbus.claims", "topic", "jobs", "group", "g")).isEqualTo(2);
        assertThat(registry.find("runbus.handler.duration").tags("topic", "jobs", "outcome", "success").timer()
                .count()).isEqualTo(2);
    }

    /**
     * A delayed message due while its key is at its flow cap is put back to wait, and counted so; the gauges show what
     * waits and the slots held.
     */
    @Test
    void countsTheEntriesPutBackToWaitForAFlowSlot() throws Exception {
        Bus bus = bus(BusConfig.builder(RedisTarget.local().uri()));
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        bus.subscribe("capped", "g", "c", d -> {
            if (calls.incrementAndGet() == 1) {
                release.await();
            }
        }, SubscribeOptions.builder().flowCap(1).blockTime(Duration.ofMillis(200)).build());
        bus.publisher().publish("capped", Message.builder("t", new byte[0]).flowKey("k").build());
        Wait.until("the first running", WAIT, () -> calls.get() == 1);
        bus.publisher().publish("capped", Message.builder("t", new byte[0]).flowKey("k").build(), Duration.ofMillis(50));

        Wait.until("the delayed one put back", WAIT,
                () -> count("runbus.flow.holds", "topic", "capped", "group", "g", "event", "parked_again") == 1);
        assertThat(calls.get()).isEqualTo(1);
        for (int i = 0; i < 2; i++) {
            bus.publisher().publish("capped", Message.builder("t", new byte[0]).flowKey("k").build());
        }
        Wait.until("the flow gauges read: three waiting, one slot held", WAIT,
                () -> gauge("runbus.flow.parked", "topic", "capped") == 3
                        && gauge("runbus.flow.held", "topic", "capped") == 1);
        release.countDown();
        Wait.until("all four acked", WAIT, () -> count("runbus.acks", "topic", "capped", "group", "g") == 4);
        Wait.until("the flow gauges back to zero", WAIT, () -> gauge("runbus.flow.parked", "topic", "capped") == 0
                && gauge("runbus.flow.held", "topic", "capped") == 0);
        Timer waits = registry.find("runbus.flow.admit.wait").tags("topic", "capped", "group", "g").timer();
        assertThat(waits.count()).as("first deliveries timed: the first, the two behind it, the delayed one")
                .isEqualTo(4);
        assertThat(waits.max(TimeUnit.MILLISECONDS)).as("the longest waited for the blocked first").isPositive();
    }

    /** Keys that only their rate holds back are counted by the throttled gauge. */
    @Test
    void countsTheKeysTheirRateHoldsBack() {
        Bus bus = bus(BusConfig.builder(RedisTarget.local().uri()));
        bus.subscribe("rated", "g", "c", d -> { }, SubscribeOptions.builder()
                .flowRate(FlowRate.of(1, Duration.ofMinutes(1))).blockTime(Duration.ofMillis(200)).build());
        for (String key : List.of("a", "a", "b", "b", "c")) {
            bus.publisher().publish("rated", Message.builder("t", new byte[0]).flowKey(key).build());
        }
        Wait.until("a and b throttled, c let in", WAIT, () -> gauge("runbus.flow.throttled", "topic", "rated") == 2
                && gauge("runbus.flow.parked", "topic", "rated") == 2);
    }

    @Test
    void countsLeasesAndOwnedPartitionsOfAnOrderedGroup() {
        Bus bus = bus(BusConfig.builder(RedisTarget.local().uri()).partitions("keyed", 2));
        Subscription sub = bus.subscribe("keyed", "g", "c", d -> {
        }, SubscribeOptions.builder().ordered(true).leaseTime(Duration.ofSeconds(3))
                .blockTime(Duration.ofMillis(200)).build());
        Wait.until("both partitions owned", WAIT,
                () -> gauge("runbus.partitions.owned", "topic", "keyed", "group", "g", "consumer", "c") == 2);
        for (int i = 0; i < 10; i++) {
            bus.publisher().publish("keyed", "k" + i, message("m" + i));
        }
        Wait.until("ten handled and acked", WAIT, () -> count("runbus.acks", "topic", "keyed", "group", "g") == 10);
        assertThat(registry.find("runbus.handler.duration").tags("topic", "keyed", "outcome", "success").timer()
                .count()).isEqualTo(10);
        assertThat(count("runbus.lease.changes", "topic", "keyed", "group", "g", "change", "acquired")).isEqualTo(2);

        sub.close();
        assertThat(count("runbus.lease.changes", "topic", "keyed", "group", "g", "change", "released")).isEqualTo(2);
        assertThat(registry.find("runbus.partitions.owned").gauges()).as("gone with the subscription").isEmpty();
    }

    @Test
    void theGaugesOfAGroupGoWithTheGroup() {
        String stream = new Keys(prefix).stream("audited");
        var redis = RedisTarget.local().redis();
        Bus bus = bus(BusConfig.builder(RedisTarget.local().uri()));
        bus.publisher().publish("audited", message("one"));
        redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "audit", XGroupCreateArgs.Builder.mkstream(true));
        bus.subscribe("audited", "g", "c", d -> {
        }, SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build());
        Wait.until("the audit group's lag read", WAIT, () -> gauge("runbus.group.lag", "topic", "audited",
                "group", "audit") == 1);

        redis.xgroupDestroy(stream, "audit");
        Wait.until("the audit group's gauges gone", WAIT,
                () -> registry.find("runbus.group.lag").tags("group", "audit").gauge() == null
                        && registry.find("runbus.group.pending").tags("group", "audit").gauge() == null);
        assertThat(gauge("runbus.group.lag", "topic", "audited", "group", "g")).isZero();
    }

    /**
     * A lag Redis cannot tell is shown as unknown, not as 0: the audit group read the first of three entries, and the
     * third was deleted (XDEL) past its position, so XINFO GROUPS answers no lag for it while the second waits. The
     * lag gauge is NaN and runbus.group.lag.unknown 1; once the group has read the stream's newest entry, the lag is
     * known again.
     */
    @Test
    void aLagRedisCannotTellIsNaNAndFlaggedNotZero() {
        String stream = new Keys(prefix).stream("audited");
        var redis = RedisTarget.local().redis();
        redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "audit", XGroupCreateArgs.Builder.mkstream(true));
        Bus bus = bus(BusConfig.builder(RedisTarget.local().uri()));
        bus.subscribe("audited", "g", "c", d -> {
        }, SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build());
        List<String> ids = List.of(bus.publisher().publish("audited", message("one")),
                bus.publisher().publish("audited", message("two")), bus.publisher().publish("audited", message("three")));
        var first = redis.xreadgroup(Consumer.from("audit", "gone"), XReadArgs.Builder.count(1),
                XReadArgs.StreamOffset.lastConsumed(stream));
        redis.xack(stream, "audit", first.get(0).getId());
        Wait.until("g handled the three", WAIT, () -> count("runbus.acks", "topic", "audited", "group", "g") == 3);
        redis.xdel(stream, ids.get(2));
        assertThat(lagOf(redis.xinfoGroups(stream), "audit")).as("XINFO GROUPS: no lag for audit").isNull();

        // One reading reads the groups one after the other: wait for one that has read both since the deletion.
        Wait.until("audit's lag read as unknown, g's as 0", WAIT,
                () -> gauge("runbus.group.lag.unknown", "topic", "audited", "group", "audit") == 1
                        && gauge("runbus.group.lag", "topic", "audited", "group", "g") == 0);
        assertThat(registry.find("runbus.group.lag").tags("topic", "audited", "group", "audit").gauge())
                .as("the lag gauge is there").isNotNull();
        assertThat(gauge("runbus.group.lag", "topic", "audited", "group", "audit")).as("unknown, not 0").isNaN();
        assertThat(gauge("runbus.group.pending", "topic", "audited", "group", "audit")).isZero();
        assertThat(gauge("runbus.group.lag", "topic", "audited", "group", "g")).as("g read everything").isZero();
        assertThat(gauge("runbus.group.lag.unknown", "topic", "audited", "group", "g")).isZero();

        // Redis counts again from the stream's newest entry: the deleted third was the newest until a fourth came.
        bus.publisher().publish("audited", message("four"));
        assertThat(redis.xreadgroup(Consumer.from("audit", "gone"), XReadArgs.StreamOffset.lastConsumed(stream)))
                .hasSize(2);
        Wait.until("audit's lag known again", WAIT,
                () -> gauge("runbus.group.lag.unknown", "topic", "audited", "group", "audit") == 0);
        assertThat(gauge("runbus.group.lag", "topic", "audited", "group", "audit")).isZero();
    }

    /** The lag field of {@code group} in an XINFO GROUPS reply (null when Redis cannot tell it). */
    private static Object lagOf(List<Object> groups, String group) {
        for (Object g : groups) {
            java.util.Map<String, Object> info = Replies.info(g);
            if (group.equals(Replies.str(info.get("name")))) {
                assertThat(info).as("XINFO GROUPS of %s has a lag field", group).containsKey("lag");
                return info.get("lag");
            }
        }
        throw new AssertionError("no group " + group);
    }

    @Test
    void aStalledRedisNeitherHoldsBackAReadOfTheGaugesNorHidesThatItStalled() {
        try (TcpProxy proxy = TcpProxy.before(RedisTarget.local().uri())) {
            Bus bus = bus(BusConfig.builder(proxy.uri()).commandTimeout(Duration.ofSeconds(1)));
            bus.subscribe("slow", "g", "c", d -> {
            }, SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build());
            bus.publisher().publish("slow", message("one"));
            Wait.until("the gauges read", WAIT, () -> gauge("runbus.stream.length", "topic", "slow") == 1);

            proxy.pause();
            try {
                Wait.until("Redis reported down", WAIT, () -> gauge("runbus.redis.up") == 0);
                long started = System.nanoTime();
                double sum = 0;
                for (Meter m : registry.getMeters()) {
                    for (var measurement : m.measure()) {
                        sum += measurement.getValue();
                    }
                }
                long tookMillis = (System.nanoTime() - started) / 1_000_000;
                // Less than the command timeout (1 s): a meter that asked Redis would wait that long at least.
                assertThat(tookMillis).as("reading every meter while Redis stalls (sum %s)", sum).isLessThan(1000);
                assertThat(gauge("runbus.stream.length", "topic", "slow")).as("the last value read").isEqualTo(1);
            } finally {
                proxy.resume();
            }
            Wait.until("Redis reported up again", WAIT, () -> gauge("runbus.redis.up") == 1);
        }
    }

    private long handled(String outcome) {
        Timer t = registry.find("runbus.handler.duration").tags("topic", "orders", "group", "g", "outcome", outcome)
                .timer();
        return t == null ? 0 : t.count();
    }

    private long count(String name, String... tags) {
        var c = registry.find(name).tags(tags).counter();
        return c == null ? 0 : (long) c.count();
    }

    private double gauge(String name, String... tags) {
        Gauge g = registry.find(name).tags(tags).gauge();
        return g == null ? Double.NaN : g.value();
    }
}
