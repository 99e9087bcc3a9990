package dev.runbus;

import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.WireFormat;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;

/**
 * Ordered consumption when Redis itself misbehaves, each test named after the defect it pins: a stall
 * ({@code CLIENT PAUSE}) that loses replies, a Redis that lost its data, a retry's backoff across owners, a member
 * that stopped renewing, a closing consumer, a lease taken by a call whose reply was lost. Each runs on a Redis server
 * of its own (the installed redis-server, and Redis 6.2), which it pauses or flushes, or behind a proxy that loses
 * replies.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@OnDeployments({LOCAL, REDIS_62})
class OrderedRedisFaultsTest {

    private static final String TOPIC = "orders";

    private final List<Bus> buses = new ArrayList<>();
    private final List<Subscription> subscriptions = new ArrayList<>();
    private final List<TcpProxy> proxies = new ArrayList<>();
    private OwnRedis redis;
    private String prefix;

    @Parameter
    Deployment deployment;

    @BeforeEach
    void setUp() {
        redis = deployment.ownRedis();
        prefix = "faults-" + UUID.randomUUID();
    }

    @AfterEach
    void tearDown() {
        subscriptions.forEach(s -> {
            try {
                s.close();
            } catch (RuntimeException ignored) {
                // closed already, or its Redis went away
            }
        });
        buses.forEach(Bus::close);
        proxies.forEach(TcpProxy::close);
        redis.close();
    }

    private Bus bus(int partitions, Duration commandTimeout) {
        return bus(redis.uri(), partitions, commandTimeout, new BusListener() { });
    }

    private Bus bus(String uri, int partitions, Duration commandTimeout, BusListener listener) {
        Bus bus = Bus.connect(BusConfig.builder(uri).keyPrefix(prefix).partitions(TOPIC, partitions)
                .commandTimeout(commandTimeout).listener(listener).build());
        buses.add(bus);
        return bus;
    }

    private Subscription subscribe(Bus bus, String consumer, Handler handler, SubscribeOptions options) {
        Subscription s = bus.subscribe(TOPIC, "g", consumer, handler, options);
        subscriptions.add(s);
        return s;
    }

    private static SubscribeOptions.Builder ordered() {
        return SubscribeOptions.builder().ordered(true).leaseTime(Duration.ofSeconds(10))
                .blockTime(Duration.ofMillis(200)).minIdle(Duration.ofSeconds(2)).batchSize(20).concurrency(4);
    }

    private static Message seq(String key, int n) {
        return Message.builder("seq", (key + ":" + n).getBytes(StandardCharsets.UTF_8)).key(key).build();
    }

    private static String text(Delivery d) {
        return new String(d.message().payload(), StandardCharsets.UTF_8);
    }

    /** Who holds group g's lease of the partition (the lease key's value), or null. */
    private String leaseHolder(int partitions, int partition) {
        return redis.redis().get(key(partitions, partition, "lease:g"));
    }

    private String key(int partitions, int partition, String suffix) {
        return prefix + ":{" + new Partitions(TOPIC, partitions).name(partition) + "}:" + suffix;
    }

    /** A key of {@code TOPIC}'s partition {@code partition} of {@code partitions}. */
    private static String keyOf(int partition, int partitions) {
        for (int i = 0; ; i++) {
            if (Partitioner.partitionOf("k" + i, partitions) == partition) {
                return "k" + i;
            }
        }
    }

    private long deadLetters(int partitions, int partition) {
        return redis.redis().xlen(key(partitions, partition, "dead"));
    }

    private long pending(int partitions, int partition) {
        return redis.redis().xpending(key(partitions, partition, "stream"), "g").getCount();
    }

    @Test
    void aReadWhoseReplyWasLost_doesNotLetALaterEntryOfItsKeyRunFirst() throws Exception {
        // A command timeout well below the pause below, and long enough for the subscribe's first calls on a busy host
        // (at 500 ms, the subscribe's heartbeat timed out once beside two CPU hogs).
        Bus bus = bus(1, Duration.ofMillis(1500));
        List<String> handled = new CopyOnWriteArrayList<>();
        subscribe(bus, "c", d -> handled.add(text(d)), ordered().build());
        bus.publisher().publish(TOPIC, seq("k", 1));
        Wait.until("k:1 handled", Duration.ofSeconds(20), () -> handled.contains("k:1"));

        // k:2 wakes the read loop, whose fenced read then waits out the pause: it times out on the client but
        // runs when Redis wakes, leaving k:2 pending under the consumer with its reply lost.
        RedisClient raw = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, byte[]> c = raw.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE))) {
            RedisAsyncCommands<String, byte[]> async = c.async();
            c.setAutoFlushCommands(false);
            Map<String, byte[]> fields = WireFormat.encode(seq("k", 2));
            var added = async.xadd(key(1, 0, "stream"), fields);
            var paused = async.clientPause(5000);
            c.flushCommands();
            added.get(5, TimeUnit.SECONDS);
            paused.get(5, TimeUnit.SECONDS);
        } finally {
            raw.shutdown();
        }
        bus(1, Duration.ofSeconds(10)).publisher().publish(TOPIC, seq("k", 3)); // answered once the pause ends

        Wait.until("k:2 and k:3 handled", Duration.ofSeconds(30), () -> handled.size() >= 3);
        assertThat(handled).containsExactly("k:1", "k:2", "k:3");
        Wait.until("nothing pending", Duration.ofSeconds(10), () -> pending(1, 0) == 0);
    }

    @Test
    void aRedisStall_doesNotDeadLetterAnEntryWhoseHandlerNeverRan() throws Exception {
        // A command timeout a third of the stall below (at 500 ms, the subscribe's heartbeat timed out once on a busy
        // host, before any stall).
        Bus bus = bus(1, Duration.ofSeconds(2));
        List<Integer> handled = new CopyOnWriteArrayList<>();
        Map<Integer, Long> deliveries = new ConcurrentHashMap<>();
        subscribe(bus, "c", d -> {
            int n = Integer.parseInt(text(d).split(":")[1]);
            handled.add(n);
            deliveries.merge(n, 1L, Long::sum);
            Thread.sleep(5);
        }, ordered().build());
        List<Message> all = new ArrayList<>();
        for (int n = 1; n <= 200; n++) {
            all.add(seq("k", n));
        }
        bus(1, Duration.ofSeconds(10)).publisher().publishAll(TOPIC, all);
        Wait.until("20 handled", Duration.ofSeconds(20), () -> handled.size() >= 20);
        redis.redis().clientPause(6000);

        Wait.until("the rest handled", Duration.ofSeconds(60),
                () -> handled.stream().distinct().count() == 200 || deadLetters(1, 0) > 0);
        assertThat(deadLetters(1, 0)).as("dead letters").isZero();
        assertThat(handled.stream().distinct().toList()).as("first runs in order")
                .isEqualTo(java.util.stream.IntStream.rangeClosed(1, 200).boxed().toList());
        Wait.until("nothing pending", Duration.ofSeconds(10), () -> pending(1, 0) == 0);
    }

    @Test
    void fencingTokens_neverGoBack_whenRedisLosesItsData() throws Exception {
        Bus bus = bus(1, Duration.ofSeconds(2));
        List<Long> tokens = new CopyOnWriteArrayList<>();
        subscribe(bus, "c", d -> tokens.add(d.fencingToken()),
                ordered().leaseTime(Duration.ofSeconds(2)).build());
        bus.publisher().publish(TOPIC, seq("k", 1));
        Wait.until("k:1 handled", Duration.ofSeconds(20), () -> tokens.size() == 1);
        long before = tokens.get(0);

        redis.redis().flushall(); // a restart without persistence: leases, counters and streams are gone
        Wait.until("the lease taken again", Duration.ofSeconds(20),
                () -> leaseHolder(1, 0) != null);
        bus.publisher().publish(TOPIC, seq("k", 2));
        Wait.until("k:2 handled", Duration.ofSeconds(20), () -> tokens.size() == 2);
        assertThat(tokens.get(1)).as("the token after the data loss").isGreaterThan(before);
    }

    @Test
    void aRetryWaitsForItsBackoff_whenItsPartitionChangesOwnerDuringTheWait() throws Exception {
        long delay = 3000;
        Bus bus = bus(1, Duration.ofSeconds(2));
        AtomicLong failedAt = new AtomicLong();
        List<Long> runsAt = new CopyOnWriteArrayList<>();
        SubscribeOptions options = ordered().leaseTime(Duration.ofSeconds(3))
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(delay))).build();
        Subscription a = subscribe(bus, "a", d -> {
            failedAt.set(System.nanoTime());
            throw new IllegalStateException("fails on a");
        }, options);
        bus.publisher().publish(TOPIC, seq("k", 1));
        Wait.until("a failed", Duration.ofSeconds(20), () -> failedAt.get() != 0);
        a.close(); // hands the partition over while its entry waits for the retry

        subscribe(bus(1, Duration.ofSeconds(2)), "b", d -> runsAt.add(System.nanoTime()), options);
        Wait.until("b ran the retry", Duration.ofSeconds(20), () -> !runsAt.isEmpty());
        // The retry's due time is whole milliseconds of Redis's clock (the one of its record, plus the delay), so it
        // may come up to a millisecond before the delay by this JVM's clock, read in the handler before the failure.
        assertThat(TimeUnit.NANOSECONDS.toMillis(runsAt.get(0) - failedAt.get()))
                .as("ms from the failure to the retry on the next owner").isGreaterThanOrEqualTo(delay - 1);
        assertThat(runsAt).hasSize(1);
    }

    /**
     * As above, but Redis refuses the retry record's write (over {@code maxmemory}, which refuses every script that
     * may grow memory, while the owner's acks and renewals go on): the owner writes it again once Redis takes writes,
     * and hands the partition over only then, so the next owner still waits. Before, the next owner found no record
     * and retried at once.
     */
    @Test
    void aRetryWhoseRecordWasRefused_stillWaitsForItsBackoff_whenItsPartitionChangesOwner() throws Exception {
        long delay = 8000;
        List<String> errors = new CopyOnWriteArrayList<>();
        Bus bus = bus(redis.uri(), 1, Duration.ofSeconds(2), new BusListener() {
            @Override
            public void onLoopError(String loop, Throwable error) {
                errors.add(loop);
            }
        });
        AtomicLong failedAt = new AtomicLong();
        List<Long> runsAt = new CopyOnWriteArrayList<>();
        SubscribeOptions options = ordered().leaseTime(Duration.ofSeconds(3))
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(delay))).build();
        Subscription a = subscribe(bus, "a", d -> {
            redis.redis().configSet("maxmemory", "1"); // the retry record's write, next, is refused
            failedAt.set(System.nanoTime());
            throw new IllegalStateException("fails on a");
        }, options);
        bus.publisher().publish(TOPIC, seq("k", 1));
        Wait.until("a's retry record refused", Duration.ofSeconds(20),
                () -> errors.stream().anyMatch(e -> e.startsWith("recording the retry")));
        redis.redis().configSet("maxmemory", "0");
        a.close(); // hands the partition over while its entry waits for the retry

        subscribe(bus(1, Duration.ofSeconds(2)), "b", d -> runsAt.add(System.nanoTime()), options);
        Wait.until("b ran the retry", Duration.ofSeconds(30), () -> !runsAt.isEmpty());
        // Whole milliseconds of Redis's clock, as above (loaded run 112: 7,999 ms).
        assertThat(TimeUnit.NANOSECONDS.toMillis(runsAt.get(0) - failedAt.get()))
                .as("ms from the failure to the retry on the next owner").isGreaterThanOrEqualTo(delay - 1);
        assertThat(runsAt).hasSize(1);
    }

    @Test
    void aMemberThatStoppedRenewing_isGivenNoPartitionOfAnOwnerThatLeft() throws Exception {
        int partitions = 4;
        Duration lease = Duration.ofSeconds(10);
        Bus bus = bus(partitions, Duration.ofSeconds(2));
        SubscribeOptions options = ordered().leaseTime(lease).build();
        Subscription a = subscribe(bus, "a", d -> { }, options);
        Wait.until("a owns every partition", Duration.ofSeconds(20), () -> {
            for (int p = 0; p < partitions; p++) {
                if (leaseHolder(partitions, p) == null) {
                    return false;
                }
            }
            return true;
        });
        // A member that renewed once and then stopped (paused): it stays a member for the lease time.
        List<String> time = redis.redis().time();
        long now = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
        redis.redis().zadd(new Keys(prefix).members(TOPIC, "g"), now + lease.toMillis(), "paused");
        Bus other = bus(partitions, Duration.ofSeconds(2));
        List<String> seenByB = new CopyOnWriteArrayList<>();
        subscribe(other, "b", d -> seenByB.add(text(d)), options);
        a.close(); // frees its partitions at once

        // The paused member's share would have stayed unowned until its membership lapsed, 10 s from now.
        Wait.until("b owns every partition", Duration.ofSeconds(6), () -> {
            for (int p = 0; p < partitions; p++) {
                String holder = leaseHolder(partitions, p);
                if (holder == null || !holder.contains(" b ")) {
                    return false;
                }
            }
            return true;
        });
    }

    @Test
    void aClosingConsumer_handsOverItsIdlePartitionsAtOnce_notAfterItsDrain() throws Exception {
        int partitions = 4;
        Bus bus = bus(partitions, Duration.ofSeconds(2));
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        String busyKey = keyOf(0, partitions);
        SubscribeOptions options = ordered().leaseTime(Duration.ofSeconds(3)).shutdownTimeout(Duration.ofSeconds(30))
                .build();
        Subscription a = subscribe(bus, "a", d -> {
            if (text(d).startsWith(busyKey + ":")) {
                running.countDown();
                release.await();
            }
        }, options);
        bus.publisher().publish(TOPIC, seq(busyKey, 1));
        assertThat(running.await(20, TimeUnit.SECONDS)).isTrue();
        List<String> seenByB = new CopyOnWriteArrayList<>();
        subscribe(bus(partitions, Duration.ofSeconds(2)), "b", d -> seenByB.add(text(d)), options);
        Wait.until("a and b share the partitions", Duration.ofSeconds(20), () -> {
            int b = 0;
            for (int p = 0; p < partitions; p++) {
                String holder = leaseHolder(partitions, p);
                b += holder != null && holder.contains(" b ") ? 1 : 0;
            }
            return b == 2;
        });
        int idleOfA = -1;
        for (int p = 1; p < partitions; p++) {
            String holder = leaseHolder(partitions, p);
            if (holder != null && holder.contains(" a ")) {
                idleOfA = p;
            }
        }
        assertThat(idleOfA).as("a owns an idle partition").isPositive();

        Thread closer = new Thread(a::close, "closing-a");
        closer.start();
        // Published once a let the partition go: published before, a could read the entry first and keep it for its
        // own drain (a partition with an entry read is not idle), which is not what this case is about.
        int idle = idleOfA;
        Wait.until("a handed over its idle partition", Duration.ofSeconds(10), () -> {
            String holder = leaseHolder(partitions, idle);
            return holder == null || !holder.contains(" a ");
        });
        String idleKey = keyOf(idleOfA, partitions);
        bus.publisher().publish(TOPIC, seq(idleKey, 1));
        Wait.until("b handled an entry of a's idle partition while a drains", Duration.ofSeconds(10),
                () -> seenByB.contains(idleKey + ":1"));
        assertThat(closer.isAlive()).as("a still drains").isTrue();
        release.countDown();
        closer.join(20_000);
        bus.publisher().publish(TOPIC, seq(busyKey, 2));
        Wait.until("b took a's busy partition after its handler ended", Duration.ofSeconds(20),
                () -> seenByB.contains(busyKey + ":2"));
        assertThat(seenByB).doesNotContain(busyKey + ":1");
    }

    /**
     * b, behind a proxy, takes the lease a closed and the proxy loses the reply of that {@code lease_acquire}; then it
     * drops the connection, and the client sends the call again on its new one. The second run found the lease taken
     * and answered "held": b owned nothing, and the partition waited for b's own lease to expire (30 s here). Now the
     * same acquisition gets its lease back.
     */
    @Test
    void aLeaseTakenByACallSentAgainAfterAReconnect_isOwnedAtOnce() throws Exception {
        TcpProxy proxy = proxy();
        List<String> seenByB = new CopyOnWriteArrayList<>();
        takenWithItsReplyLost(proxy, Duration.ofSeconds(5), new BusListener() { }, seenByB);
        proxy.swallowReplies(false);
        proxy.dropConnections(); // the call is unanswered: the client sends it again once reconnected

        bus(1, Duration.ofSeconds(2)).publisher().publish(TOPIC, seq("k", 1));
        Wait.until("b handled k:1, long before its lease could expire", Duration.ofSeconds(10),
                () -> seenByB.contains("k:1"));
    }

    /**
     * As above, but the call times out, and so does everything b sends for a while (the proxy loses every reply until
     * b's next tick failed too; then it drops the connection, which a lost reply leaves out of step, and the client
     * sends nothing that timed out again). The call ran: b's lease was taken. b then asked for the lease again and
     * was answered "held" by its own lease, so the partition waited for that lease to expire. Now the next call of
     * the same acquisition gets the lease back.
     */
    @Test
    void aLeaseTakenByACallThatTimedOut_isOwnedAtTheNextTry() throws Exception {
        List<String> errors = new CopyOnWriteArrayList<>();
        BusListener listener = new BusListener() {
            @Override
            public void onLoopError(String loop, Throwable error) {
                errors.add(loop);
            }
        };
        TcpProxy proxy = proxy();
        List<String> seenByB = new CopyOnWriteArrayList<>();
        takenWithItsReplyLost(proxy, Duration.ofSeconds(1), listener, seenByB);
        // The acquisition timed out, and a later tick of b's failed too (its member list got no answer): every call
        // b sent about the lease meanwhile timed out, and no reply of them came back.
        Wait.until("b's acquisition timed out, and a tick after it", Duration.ofSeconds(20), () -> {
            List<String> now = List.copyOf(errors);
            int timedOut = -1;
            for (int i = 0; i < now.size(); i++) {
                if (now.get(i).startsWith("taking the lease of") && timedOut < 0) {
                    timedOut = i;
                } else if (timedOut >= 0 && now.get(i).startsWith("runbus-leases-")) {
                    return true;
                }
            }
            return false;
        });
        proxy.swallowReplies(false);
        proxy.dropConnections();

        bus(1, Duration.ofSeconds(2)).publisher().publish(TOPIC, seq("k", 1));
        Wait.until("b handled k:1, long before its lease could expire", Duration.ofSeconds(10),
                () -> seenByB.contains("k:1"));
    }

    private TcpProxy proxy() {
        TcpProxy proxy = TcpProxy.before(redis.uri());
        proxies.add(proxy);
        return proxy;
    }

    /**
     * a owns the one partition; b, subscribed through {@code proxy} with {@code commandTimeout}, takes it once a
     * closed, and the proxy loses the reply of that {@code lease_acquire} and of all that follows. Returns once the
     * call ran (b holds the lease in Redis).
     */
    private void takenWithItsReplyLost(TcpProxy proxy, Duration commandTimeout, BusListener listener,
                                       List<String> seenByB) {
        SubscribeOptions options = ordered().leaseTime(Duration.ofSeconds(30)).build();
        Subscription a = subscribe(bus(1, Duration.ofSeconds(2)), "a", d -> { }, options);
        Wait.until("a owns the partition", Duration.ofSeconds(20), () -> {
            String holder = leaseHolder(1, 0);
            return holder != null && holder.contains(" a ");
        });
        subscribe(bus(proxy.uri(), 1, commandTimeout, listener), "b", d -> seenByB.add(text(d)), options);
        proxy.swallowRepliesFrom(new Keys(prefix).fence(new Partitions(TOPIC, 1).name(0), "g"));
        a.close(); // frees the partition: b's next tick takes it
        Wait.until("b's lease_acquire ran", Duration.ofSeconds(20), () -> {
            String holder = leaseHolder(1, 0);
            return holder != null && holder.contains(" b ");
        });
    }
}
