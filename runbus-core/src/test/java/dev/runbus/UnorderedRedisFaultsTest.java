package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testing.StartRecords;
import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.models.stream.PendingMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Unordered groups when Redis itself misbehaves: a delivery counts when a handler starts on it (docs/architecture.md, rule
 * 13), not when a read or claim ran whose reply was lost. Each test runs on a Redis server of its own.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class UnorderedRedisFaultsTest {

    private static final String TOPIC = "jobs";

    private final List<Bus> buses = new ArrayList<>();
    private final List<Subscription> subscriptions = new ArrayList<>();
    private OwnRedis redis;
    private String prefix;

    @BeforeEach
    void setUp() {
        redis = OwnRedis.process();
        prefix = "starts-" + UUID.randomUUID();
    }

    @AfterEach
    void tearDown() {
        try {
            // whatever the faults left in the start record, the janitor's sweep removes while the buses run
            StartRecords.awaitNoMoreThanPending(redis.redis(), prefix, Duration.ofSeconds(10));
        } finally {
            closeEverything();
        }
    }

    private void closeEverything() {
        subscriptions.forEach(s -> {
            try {
                s.close();
            } catch (RuntimeException ignored) {
                // closed already
            }
        });
        buses.forEach(Bus::close);
        redis.close();
    }

    private Bus bus(String uri, Duration commandTimeout) {
        Bus bus = Bus.connect(BusConfig.builder(uri).keyPrefix(prefix).commandTimeout(commandTimeout)
                .janitorInterval(Duration.ofSeconds(1)).build());
        buses.add(bus);
        return bus;
    }

    private String key(String suffix) {
        return prefix + ":{" + TOPIC + "}:" + suffix;
    }

    private long pending() {
        return redis.redis().xpending(key("stream"), "g").getCount();
    }

    /** The PEL's delivery count of the topic's only pending entry, 0 when none is pending. */
    private long pelCount() {
        List<PendingMessage> p = redis.redis().xpending(key("stream"), "g", Range.create("-", "+"), Limit.from(1));
        return p.isEmpty() ? 0 : p.get(0).getRedeliveryCount();
    }

    /** Waits for the group's start record to be gone: every field goes with its entry's ack. */
    private void startRecordEmptied() {
        Wait.until("the start record emptied", Duration.ofSeconds(10), () -> redis.redis().hgetall(key("starts:g")),
                java.util.Map::isEmpty);
    }

    private static SubscribeOptions.Builder unordered() {
        return SubscribeOptions.builder().minIdle(Duration.ofSeconds(1)).maxDeliveries(3)
                .claimInterval(Duration.ofMillis(200)).blockTime(Duration.ofMillis(200)).batchSize(10).concurrency(2);
    }

    private static Message job(String text) {
        return Message.builder("job", text.getBytes(StandardCharsets.UTF_8)).build();
    }

    @Test
    void readsAndClaimsWhoseRepliesWereLost_doNotCountAsDeliveries() {
        try (TcpProxy proxy = TcpProxy.before(redis.uri())) {
            Bus consumer = bus(proxy.uri(), Duration.ofMillis(500));
            AtomicInteger started = new AtomicInteger();
            subscriptions.add(consumer.subscribe(TOPIC, "g", "c", d -> started.incrementAndGet(), unordered().build()));
            Bus publisher = bus(redis.uri(), Duration.ofSeconds(5));
            publisher.publisher().publish(TOPIC, job("warm-up"));
            Wait.until("the warm-up handled", Duration.ofSeconds(20), () -> started.get() == 1 && pending() == 0);

            // Every reply is lost: the read takes the entry and each takeover claims it again, all on Redis,
            // none answered. The PEL counts a delivery for each; no handler starts.
            proxy.swallowReplies(true);
            publisher.publisher().publish(TOPIC, job("lost"));
            Wait.until("the PEL to count 4 deliveries nobody started", Duration.ofSeconds(30), () -> pelCount() >= 4);
            proxy.dropConnections();
            proxy.swallowReplies(false);

            Wait.until("the entry finished", Duration.ofSeconds(30), () -> pending() == 0);
            assertThat(started.get()).as("handler starts on the entry").isGreaterThanOrEqualTo(2);
            assertThat(redis.redis().xlen(key("dead"))).as("dead letters").isZero();
            startRecordEmptied();
        }
    }

    @Test
    void aHandlerThatAlwaysFails_isDeadLetteredAfterExactlyMaxDeliveriesStarts_acrossATakeover() throws Exception {
        Bus first = bus(redis.uri(), Duration.ofSeconds(2));
        AtomicInteger starts = new AtomicInteger();
        CountDownLatch firstStarted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Subscription dying = first.subscribe(TOPIC, "g", "a", d -> {
            starts.incrementAndGet();
            firstStarted.countDown();
            release.await(); // stuck: its consumer is closed under it and never settles it
            throw new IllegalStateException("fails always");
        }, unordered().shutdownTimeout(Duration.ofMillis(100)).build());
        first.publisher().publish(TOPIC, job("poison"));
        assertThat(firstStarted.await(20, TimeUnit.SECONDS)).isTrue();
        dying.close(); // gives up on the running handler: the entry stays pending under "a", no longer kept alive

        Bus second = bus(redis.uri(), Duration.ofSeconds(2));
        subscriptions.add(second.subscribe(TOPIC, "g", "b", d -> {
            starts.incrementAndGet();
            throw new IllegalStateException("fails always");
        }, unordered().build()));
        Wait.until("the entry dead-lettered", Duration.ofSeconds(30), () -> redis.redis().xlen(key("dead")) == 1);
        release.countDown();
        assertThat(pending()).isZero();
        assertThat(starts.get()).as("handler starts").isEqualTo(3);
        List<StreamMessage<String, String>> dead = redis.redis().xrange(key("dead"), Range.create("-", "+"));
        assertThat(dead.get(0).getBody().get("dl:deliveries")).isEqualTo("3");
        assertThat(dead.get(0).getBody().get("dl:reason")).contains("fails always");
        startRecordEmptied();
    }

    @Test
    void theStartRecordIsEmptyOnceEverythingIsAcked() {
        Bus bus = bus(redis.uri(), Duration.ofSeconds(2));
        AtomicInteger handled = new AtomicInteger();
        AtomicInteger failedOnce = new AtomicInteger();
        subscriptions.add(bus.subscribe(TOPIC, "g", "c", d -> {
            // every tenth entry fails its first delivery, so that some come back by a takeover
            if (new String(d.message().payload(), StandardCharsets.UTF_8).endsWith("0") && d.deliveryCount() == 1) {
                failedOnce.incrementAndGet();
                throw new IllegalStateException("first delivery fails");
            }
            handled.incrementAndGet();
        }, unordered().build()));
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            batch.add(job("m" + i));
        }
        bus.publisher().publishAll(TOPIC, batch);
        Wait.until("all handled", Duration.ofSeconds(40), () -> handled.get() == 200 && pending() == 0);
        assertThat(failedOnce.get()).isEqualTo(20);
        assertThat(redis.redis().xlen(key("dead"))).isZero();
        startRecordEmptied();
    }
}
