package dev.runbus.internal.flow;

import static dev.runbus.testkit.Deployment.CLUSTER;
import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.FlowRate;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.internal.scripts.ScriptCalls;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;

/**
 * {@code flow.lua}, the per-key concurrency caps of one partition, on a real Redis: what each operation admits,
 * parks, renews and reaps, read back from the stream and the holds. On Redis 7, on 6.2 and on a cluster (every key
 * of the script in the partition's slot).
 */
@OnDeployments({LOCAL, REDIS_62, CLUSTER})
class FlowCapsTest {

    private static final String PARTITION = "orders";
    private static final Duration LONG_LEASE = Duration.ofMinutes(5);

    private final String prefix = "test-flow-" + UUID.randomUUID();
    private final Keys keys = new Keys(prefix);
    private final String stream = keys.stream(PARTITION);
    private final String holds = keys.flow(PARTITION)[3];
    private final String held = keys.flow(PARTITION)[4];
    private RedisLink link;
    private RedisClusterCommands<String, String> redis;

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    @BeforeEach
    void connect() {
        link = RedisLink.open(target().uri(), Duration.ofSeconds(5));
        redis = target().redis();
    }

    @AfterEach
    void tearDown() {
        link.close();
        target().deleteKeys(prefix);
    }

    /** The partition's caps, configured as a subscription would. */
    private FlowCaps caps(int cap, Duration lease) {
        FlowCaps caps = unconfigured();
        caps.configure("g", cap, lease);
        return caps;
    }

    /** The partition's caps as a publisher sees them: the caps and the lease are whatever Redis holds. */
    private FlowCaps unconfigured() {
        return new FlowCaps(ScriptCalls.auto(link.sync()), link.sync(), link.async(), keys, PARTITION);
    }

    private static Map<String, byte[]> entry(int n) {
        Map<String, byte[]> fields = new LinkedHashMap<>();
        fields.put("n", Integer.toString(n).getBytes(StandardCharsets.UTF_8));
        fields.put("payload", new byte[] {0, (byte) 0xff, 10, (byte) n});
        return fields;
    }

    /** The stream's entries in order, as their field n. */
    private List<String> admittedNs() {
        return redis.xrange(stream, Range.create("-", "+")).stream().map(m -> m.getBody().get("n")).toList();
    }

    private long holding(String flowKey) {
        return redis.zlexcount(held, Range.create(flowKey + "\0", flowKey + "\1"));
    }

    private String admittedId(int n) {
        return redis.xrange(stream, Range.create("-", "+")).stream().filter(m -> m.getBody().get("n").equals("" + n))
                .map(StreamMessage::getId).findFirst().orElseThrow();
    }

    /** Waits until Redis's clock passed every hold's expiry: a condition on the server's clock, not a sleep. */
    private void untilEveryHoldExpired() {
        double last = redis.zrangeWithScores(holds, -1, -1).stream().mapToDouble(s -> s.getScore()).max().orElse(0);
        Wait.until("Redis's clock past the last hold's expiry", Duration.ofSeconds(10),
                () -> redisMillis() > last);
    }

    private long redisMillis() {
        List<String> t = link.sync().time().stream().map(b -> new String(b, StandardCharsets.UTF_8)).toList();
        return Long.parseLong(t.get(0)) * 1000 + Long.parseLong(t.get(1)) / 1000;
    }

    /**
     * A rate of one entry per second with a burst of 2: two of four are let in at once, the others wait in later for
     * the key's next admission; a tick before it is due admits nothing and tells the first caller (now the
     * partition's ticker) when to come back, and any other caller nothing. Once Redis's clock passed the due time, a
     * tick admits one, and the next is due a second later; a release does not let the key past its rate.
     */
    @Test
    void aRateLetsInABurstThenOneAtItsInterval_andOnlyTheTickerIsToldWhenToTick() {
        FlowCaps caps = unconfigured();
        caps.configure("g", 10, LONG_LEASE, FlowRate.perSecond(1).withBurst(2));
        List<String> admitted = new ArrayList<>();
        for (int n = 1; n <= 4; n++) {
            admitted.addAll(caps.park("tenant-a", entry(n)).admitted());
        }
        assertThat(admittedNs()).as("the burst let in").containsExactly("1", "2");
        String later = keys.flow(PARTITION)[8];
        assertThat(redis.zrange(later, 0, -1)).as("keys waiting for their rate").containsExactly("tenant-a");

        FlowCaps.Admitted early = caps.tick("c1", Duration.ofSeconds(15), 100);
        assertThat(early.admitted()).as("nothing due yet").isEmpty();
        assertThat(early.nextTickMillis()).as("c1, now the ticker, told when to tick").isBetween(1L, 1000L);
        assertThat(caps.tick("c2", Duration.ofSeconds(15), 100).nextTickMillis()).as("c2 is not the ticker")
                .isEqualTo(-1);
        assertThat(caps.release(List.of(new FlowCaps.Hold("tenant-a", admittedId(1))))).as("a release within the rate")
                .isEmpty();

        double due = redis.zscore(later, "tenant-a");
        Wait.until("Redis's clock past the key's due time", Duration.ofSeconds(10), () -> redisMillis() > due);
        FlowCaps.Admitted onTime = caps.tick("c1", Duration.ofSeconds(15), 100);
        assertThat(onTime.admitted()).as("one let in when due").hasSize(1);
        assertThat(admittedNs()).containsExactly("1", "2", "3");
        assertThat(redis.zscore(later, "tenant-a")).as("the next one due a second later").isEqualTo(due + 1000);
        assertThat(onTime.nextTickMillis()).as("and the ticker told so").isBetween(0L, 1000L);
    }

    /**
     * An entry that reaches the stream without a slot (a delayed or retried entry, moved there by the delay mover) is
     * held to its key's rate as an admission is: with the key's one entry a second spent, it is parked again and its
     * key waits in later for its due time, instead of starting past the rate.
     */
    @Test
    void anEntryThatReachesTheStreamWithoutASlot_isHeldToItsKeysRate() {
        FlowCaps caps = unconfigured();
        caps.configure("g", 10, LONG_LEASE, FlowRate.perSecond(1));
        assertThat(caps.park("tenant-a", entry(1)).admitted()).as("the first, within the rate").hasSize(1);
        redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g", XGroupCreateArgs.Builder.mkstream(true));
        String moved = redis.xadd(stream, Map.of("n", "2", "flow_key", "tenant-a", "flow_seq", "0000000000000009"));

        FlowCaps.Confirmed c = caps.confirm("g", List.of(new FlowCaps.Claim("tenant-a", moved, 0)));
        assertThat(c.confirmed()).as("started past the rate").isEmpty();
        assertThat(c.parkedAgain()).containsExactly(moved);
        assertThat(admittedNs()).as("in the stream").containsExactly("1");
        assertThat(redis.zrange(keys.flow(PARTITION)[8], 0, -1)).as("waiting for the rate").containsExactly("tenant-a");
    }

    @Test
    void aKeyRunsAtMostItsCap_theRestWaitsOutsideTheStreamInOrder() {
        FlowCaps caps = caps(3, LONG_LEASE);
        List<String> admitted = new ArrayList<>();
        for (int n = 1; n <= 10; n++) {
            admitted.addAll(caps.park("tenant-a", entry(n)).admitted());
        }

        assertThat(admitted).hasSize(3);
        assertThat(admittedNs()).containsExactly("1", "2", "3");
        assertThat(holding("tenant-a")).isEqualTo(3);
        assertThat(redis.xlen(keys.flow(PARTITION)[1])).isEqualTo(7); // parked, not in the stream: no pending list
        StreamMessage<String, byte[]> first = link.sync().xrange(stream, Range.create("-", "+")).get(0);
        assertThat(first.getBody().get("payload")).containsExactly(0, (byte) 0xff, 10, 1);
        assertThat(new String(first.getBody().get("flow_key"), StandardCharsets.UTF_8)).isEqualTo("tenant-a");
    }

    @Test
    void beforeASubscriptionConfiguredThePartitionEverythingWaits_thenEachKeyGetsItsCap() {
        FlowCaps publisher = unconfigured();
        for (int k = 0; k < FlowCaps.KEYS_PER_CONFIGURE_CALL + 50; k++) {
            assertThat(publisher.park("tenant-" + k, entry(2 * k)).admitted()).isEmpty();
            assertThat(publisher.park("tenant-" + k, entry(2 * k + 1)).admitted()).isEmpty();
        }
        assertThat(publisher.cap("tenant-0", 5)).isEmpty(); // an override alone admits nothing either
        assertThat(redis.exists(stream)).isZero();

        List<String> admitted = unconfigured().configure("g", 1, LONG_LEASE); // two calls: 100 keys, then 50

        assertThat(admitted).hasSize(FlowCaps.KEYS_PER_CONFIGURE_CALL + 50 + 1); // tenant-0's override: 2
        assertThat(holding("tenant-0")).isEqualTo(2);
        assertThat(holding("tenant-149")).isEqualTo(1);
        assertThat(publisher.park("tenant-149", entry(1_000)).admitted()).isEmpty();
        assertThat(publisher.park("new", entry(1_001)).admitted()).hasSize(1);
    }

    @Test
    void eachReleaseAdmitsExactlyOne_theOldestOfItsKey() {
        FlowCaps caps = caps(2, LONG_LEASE);
        for (int n = 1; n <= 6; n++) {
            caps.park("tenant-a", entry(n));
        }
        String one = admittedId(1);

        List<String> next = caps.release(List.of(new FlowCaps.Hold("tenant-a", one)));

        assertThat(next).hasSize(1);
        assertThat(admittedNs()).containsExactly("1", "2", "3");
        assertThat(holding("tenant-a")).isEqualTo(2);
        // a release sent again (its reply lost) frees nothing more
        assertThat(caps.release(List.of(new FlowCaps.Hold("tenant-a", one)))).isEmpty();
        assertThat(holding("tenant-a")).isEqualTo(2);
    }

    @Test
    void aKeyAtItsCapDoesNotHoldBackAnother() {
        FlowCaps caps = caps(1, LONG_LEASE);
        for (int n = 1; n <= 1_000; n++) {
            caps.park("busy", entry(n));
        }

        FlowCaps.Parked quiet = caps.park("quiet", entry(1_001));

        assertThat(quiet.admitted()).hasSize(1);
        assertThat(admittedNs()).containsExactly("1", "1001");
    }

    @Test
    void expiredHoldsTakeTheirSlotsUntilReaped_thenTheReapAdmitsInTheirPlace() {
        FlowCaps caps = caps(2, Duration.ofMillis(50));
        for (int n = 1; n <= 5; n++) {
            caps.park("tenant-a", entry(n));
        }
        untilEveryHoldExpired();

        // expired, not reaped: still counted, and a renewal keeps them (nobody took their slots)
        assertThat(caps.park("tenant-a", entry(6)).admitted()).isEmpty();
        assertThat(caps.renew(List.of(new FlowCaps.Hold("tenant-a", admittedId(1))))).isEmpty();
        untilEveryHoldExpired();

        FlowCaps.Reaped reaped = caps.reap(100);

        assertThat(reaped.holds()).isEqualTo(2);
        assertThat(reaped.admitted()).hasSize(2);
        assertThat(admittedNs()).containsExactly("1", "2", "3", "4");
        assertThat(holding("tenant-a")).isEqualTo(2);
        // the reaped holds are lost to whoever still runs their entries
        assertThat(caps.renew(List.of(new FlowCaps.Hold("tenant-a", admittedId(1)),
                new FlowCaps.Hold("tenant-a", admittedId(3))))).containsExactly(admittedId(1));
    }

    @Test
    void anEntryWhoseHoldWasReapedStartsOnlyWithAFreeSlot_elseItIsParkedAgainInItsPlace() {
        FlowCaps caps = caps(1, Duration.ofMillis(50));
        redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g", XGroupCreateArgs.Builder.mkstream());
        caps.park("tenant-a", entry(1));
        caps.park("tenant-a", entry(2));
        caps.park("tenant-a", entry(3));
        String one = admittedId(1);
        untilEveryHoldExpired();
        caps.reap(100); // 1's hold reaped; 2 admitted in its place
        // 1 is read only now (every consumer was busy): the key's slot is 2's
        List<StreamMessage<String, String>> read = redis.xreadgroup(Consumer.from("g", "c"),
                XReadArgs.Builder.count(1), XReadArgs.StreamOffset.lastConsumed(stream));
        assertThat(read).extracting(StreamMessage::getId).containsExactly(one);

        FlowCaps.Confirmed c = caps.confirm("g", List.of(new FlowCaps.Claim("tenant-a", one, 0)));

        assertThat(c.confirmed()).isEmpty();
        assertThat(c.parkedAgain()).containsExactly(one);
        assertThat(redis.xpending(stream, "g").getCount()).isZero(); // not a delivery: nothing pending
        assertThat(admittedNs()).containsExactly("2");
        // 2 finishes: 1 goes first again, ahead of 3
        caps.release(List.of(new FlowCaps.Hold("tenant-a", admittedId(2))));
        assertThat(admittedNs()).containsExactly("2", "1");
    }

    /**
     * A taken-over entry parked again keeps the handler starts it had, added to its attempts: a poison that killed its
     * consumers is still counted toward maxDeliveries however often it waits again.
     */
    @Test
    void anEntryParkedAgainKeepsTheStartsItHadInItsAttempts() {
        FlowCaps caps = caps(1, Duration.ofMillis(50));
        redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g", XGroupCreateArgs.Builder.mkstream());
        Map<String, byte[]> retried = entry(1);
        retried.put("attempts", "1".getBytes(StandardCharsets.UTF_8)); // a retry's copy, one attempt made before
        caps.park("tenant-a", retried);
        caps.park("tenant-a", entry(2));
        caps.park("tenant-a", entry(3));
        String one = admittedId(1);
        untilEveryHoldExpired();
        caps.reap(100); // 2 admitted in 1's place
        redis.xreadgroup(Consumer.from("g", "c"), XReadArgs.Builder.count(1), XReadArgs.StreamOffset.lastConsumed(stream));

        FlowCaps.Confirmed c = caps.confirm("g", List.of(new FlowCaps.Claim("tenant-a", one, 2)));

        assertThat(c.parkedAgain()).containsExactly(one);
        caps.release(List.of(new FlowCaps.Hold("tenant-a", admittedId(2))));
        String again = admittedId(1);
        assertThat(again).as("back in the stream as a new entry").isNotEqualTo(one);
        assertThat(redis.xrange(stream, Range.create(again, again)).get(0).getBody())
                .as("the attempt before it and the two starts it had").containsEntry("attempts", "3")
                .containsEntry("flow_key", "tenant-a");
    }

    @Test
    void anEntryWhoseHoldWasReapedTakesAFreeSlotWhenItStarts() {
        FlowCaps caps = caps(2, Duration.ofMillis(50));
        caps.park("tenant-a", entry(1));
        String one = admittedId(1);
        untilEveryHoldExpired();
        caps.reap(100);
        assertThat(holding("tenant-a")).isZero();

        FlowCaps.Confirmed c = caps.confirm("g", List.of(new FlowCaps.Claim("tenant-a", one, 0)));

        assertThat(c.confirmed()).containsExactly(one);
        assertThat(holding("tenant-a")).isEqualTo(1);
    }

    @Test
    void aLoweredCapAdmitsNothingUntilFewerHold_aRaisedOneAdmitsAtOnce() {
        FlowCaps caps = caps(10, LONG_LEASE);
        for (int n = 1; n <= 30; n++) {
            caps.park("tenant-a", entry(n));
        }
        assertThat(holding("tenant-a")).isEqualTo(10);

        assertThat(caps.cap("tenant-a", 2)).isEmpty();
        for (int n = 1; n <= 8; n++) {
            assertThat(caps.release(List.of(new FlowCaps.Hold("tenant-a", admittedId(n))))).isEmpty();
        }
        assertThat(holding("tenant-a")).isEqualTo(2);
        assertThat(caps.release(List.of(new FlowCaps.Hold("tenant-a", admittedId(9))))).hasSize(1);

        assertThat(caps.cap("tenant-a", 10)).hasSize(8);
        assertThat(holding("tenant-a")).isEqualTo(10);
        assertThat(caps.cap("tenant-a", null)).isEmpty(); // back to the default, 10: nothing more
        assertThat(caps.cap("paused", 0)).isEmpty();
        assertThat(caps.park("paused", entry(99)).admitted()).isEmpty();
    }

    /**
     * Many clients parking, releasing, reaping and confirming at once, with holds that expire under them: at no
     * script boundary does a key hold more than its cap, and every entry ends in the stream exactly once.
     */
    @Test
    void underConcurrentUseNoKeyEverHoldsMoreThanItsCap_andNothingIsLostOrDoubled() throws Exception {
        int cap = 3;
        int perThread = 150;
        int threads = 4;
        List<String> flowKeys = List.of("a", "b", "c");
        redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g", XGroupCreateArgs.Builder.mkstream());
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Long>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                workers.add(pool.submit(() -> {
                    FlowCaps caps = caps(cap, Duration.ofMillis(20));
                    Random random = new Random(thread);
                    long worst = 0;
                    for (int i = 0; i < perThread; i++) {
                        String k = flowKeys.get(random.nextInt(flowKeys.size()));
                        caps.park(k, entry(thread * perThread + i));
                        switch (random.nextInt(3)) {
                            case 0 -> caps.reap(10);
                            case 1 -> releaseOne(caps);
                            default -> startOne(caps);
                        }
                        for (String key : flowKeys) {
                            worst = Math.max(worst, holding(key));
                        }
                    }
                    return worst;
                }));
            }
            for (Future<Long> w : workers) {
                assertThat(w.get()).isLessThanOrEqualTo(cap);
            }
        } finally {
            pool.shutdownNow();
        }
        // drain: release whatever holds, until nothing is parked
        FlowCaps caps = caps(cap, Duration.ofMillis(20));
        Wait.until("every parked entry admitted", Duration.ofSeconds(30), () -> {
            List<FlowCaps.Hold> all = new ArrayList<>();
            for (String member : redis.zrange(held, 0, -1)) {
                all.add(holdOf(member));
            }
            caps.release(all);
            return redis.xlen(keys.flow(PARTITION)[1]) == 0;
        });
        List<String> ns = admittedNs();
        Set<String> distinct = new HashSet<>(ns);
        assertThat(ns).hasSize(threads * perThread);
        assertThat(distinct).hasSize(threads * perThread);
    }

    /** Releases the hold of the oldest held entry, as its ack would. */
    private void releaseOne(FlowCaps caps) {
        List<String> members = redis.zrange(held, 0, 0);
        if (!members.isEmpty()) {
            caps.release(List.of(holdOf(members.get(0))));
        }
    }

    /** A member of the held set, {@code flow key NUL stream id}, as the hold it is. */
    private static FlowCaps.Hold holdOf(String member) {
        int nul = member.indexOf('\0');
        return new FlowCaps.Hold(member.substring(0, nul), member.substring(nul + 1));
    }

    /** Reads one entry as a consumer and confirms it, as a start would; one parked again is gone from the stream. */
    private void startOne(FlowCaps caps) {
        List<StreamMessage<String, String>> read = redis.xreadgroup(Consumer.from("g", "c"),
                XReadArgs.Builder.count(1), XReadArgs.StreamOffset.lastConsumed(stream));
        for (StreamMessage<String, String> m : read) {
            caps.confirm("g", List.of(new FlowCaps.Claim(m.getBody().get("flow_key"), m.getId(), 0)));
        }
    }

    @Test
    void aFlowKeyIsCheckedBeforeAnythingIsSent() {
        assertThatThrownBy(() -> FlowCaps.checkKey("a\0b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("NUL");
        assertThatThrownBy(() -> FlowCaps.checkKey("x".repeat(257))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 256 UTF-8 bytes, got 257");
        assertThatThrownBy(() -> FlowCaps.checkKey(null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(FlowCaps.checkKey("")).isEmpty();
        FlowCaps caps = caps(1, LONG_LEASE);
        Map<String, byte[]> own = new HashMap<>(entry(1));
        own.put("flow_seq", new byte[] {1});
        assertThatThrownBy(() -> caps.park("a", own)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("flow_seq");
        assertThat(redis.exists(stream)).isZero();
    }
}
