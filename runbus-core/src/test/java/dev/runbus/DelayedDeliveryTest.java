package dev.runbus;

import static dev.runbus.testkit.Deployment.CLUSTER;
import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;

/**
 * Delayed publish: entries wait in their stream's delay set and are moved into the stream when due, by the Redis
 * server's clock, once each however many buses move them. Times are compared on one machine: the Redis server's
 * TIME and this JVM's wall clock are the same clock here.
 */
@OnDeployments({LOCAL, REDIS_62, CLUSTER})
class DelayedDeliveryTest {

    /**
     * How late the test accepts an entry: what the bound is there to catch is an entry moved only by a later fallback
     * (a takeover after {@code minIdle}, 30 s here, or a retention pass), so it stays well below those and far above
     * what a busy host adds to the poll interval (100 ms) and a round trip: 4.4 s was seen beside two CPU hogs and
     * another test JVM. How late entries come on an idle host is the benchmark's (docs/benchmarks.md, delayed delivery).
     */
    private static final long BOUND_MILLIS = 10_000;

    final String prefix = "test-delay-" + UUID.randomUUID();
    private final List<Bus> buses = new ArrayList<>();

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    @AfterEach
    void cleanUp() {
        buses.forEach(Bus::close);
        target().deleteKeys(prefix);
    }

    private Bus bus(BusConfig.Builder b) {
        Bus bus = Bus.connect(b.keyPrefix(prefix).build());
        buses.add(bus);
        return bus;
    }

    private Bus bus() {
        return bus(BusConfig.builder(target().uri()));
    }

    /** The Redis server's time, epoch ms. */
    private long redisNow() {
        List<String> t = target().redis().time();
        return Long.parseLong(t.get(0)) * 1000 + Long.parseLong(t.get(1)) / 1000;
    }

    private static Message message(String name, long dueMillis) {
        return Message.builder("t", name.getBytes(StandardCharsets.UTF_8)).header("due", Long.toString(dueMillis))
                .build();
    }

    @Test
    void thousandEntriesSpreadOverThreeSecondsAreEachDeliveredOnceNoEarlierThanDueByThreeMovers() {
        String topic = "delayed";
        Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
        Map<String, Long> lastHandledAt = new ConcurrentHashMap<>();
        List<String> early = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 3; i++) {
            Bus b = bus();
            b.subscribe(topic, "g", "c" + i, d -> {
                long now = System.currentTimeMillis();
                long due = Long.parseLong(d.message().headers().get("due"));
                if (now < due) {
                    early.add(d.message().id() + " " + (due - now) + " ms early");
                }
                String name = new String(d.message().payload(), StandardCharsets.UTF_8);
                lastHandledAt.put(name, now);
                handled.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
            }, SubscribeOptions.builder().blockTime(Duration.ofMillis(500)).build());
        }
        Publisher publisher = buses.get(0).publisher();
        Random random = new Random(7);
        // Due from 1.5 s on: the 1000 calls are usually made by then (on a busy host not all: see movableFrom).
        long start = redisNow() + 1500;
        // When each entry could first be moved: its due time, or its schedule call when that came later. On a busy
        // host the 1000 calls can take longer than the lead of the first due time, and an entry scheduled after
        // its due time is late by that much before any mover could see it.
        Map<String, Long> movableFrom = new HashMap<>();
        int overdueWhenScheduled = 0;
        long scheduling = System.nanoTime();
        for (int i = 0; i < 1000; i++) {
            long due = start + random.nextInt(3000);
            long now = System.currentTimeMillis();
            overdueWhenScheduled += now > due ? 1 : 0;
            movableFrom.put("m" + i, Math.max(due, now));
            publisher.publishAt(topic, message("m" + i, due), Instant.ofEpochMilli(due));
        }
        long schedulingMillis = (System.nanoTime() - scheduling) / 1_000_000;
        Wait.until("1000 delayed entries handled", Duration.ofSeconds(40), () -> handled.size() == 1000);
        assertThat(early).as("entries handled before they were due").isEmpty();
        assertThat(handled.values()).as("each entry handled once").allMatch(n -> n.get() == 1);
        List<Long> sorted = new ArrayList<>();
        movableFrom.forEach((name, from) -> sorted.add(lastHandledAt.get(name) - from));
        Collections.sort(sorted);
        System.out.printf("DELAY[%s] 1000 entries over 3 s, 3 movers: handled after due p50 %d ms, p99 %d ms, max %d"
                + " ms (the 1000 calls took %d ms; %d scheduled after their due time)%n", target().name(),
                sorted.get(500), sorted.get(989), sorted.get(sorted.size() - 1), schedulingMillis, overdueWhenScheduled);
        assertThat(sorted.get(sorted.size() - 1))
                .as("latest handling after due (or after the schedule call, if later), ms").isLessThan(BOUND_MILLIS);
        assertThat(buses.get(0).scheduled().count(topic)).isZero();
        assertThat(target().redis().xlen(prefix + ":{" + topic + "}:stream")).isEqualTo(1000);
    }

    @Test
    void aPublisherClockMinutesOffMakesEntriesNeitherEarlyNorLate() {
        String topic = "skewed";
        List<String> handledLog = new CopyOnWriteArrayList<>();
        Bus consumer = bus();
        consumer.subscribe(topic, "g", "c", d -> handledLog.add(d.message().headers().get("due") + " "
                + System.currentTimeMillis()), SubscribeOptions.builder().blockTime(Duration.ofMillis(500)).build());
        for (Duration skew : List.of(Duration.ofMinutes(10), Duration.ofMinutes(-10))) {
            Bus skewed = bus(BusConfig.builder(target().uri()).clock(Clock.offset(Clock.systemUTC(), skew)));
            long before = redisNow();
            skewed.publisher().publish(topic, message("in", before + 500), Duration.ofMillis(500));
            // An instant on the server's clock: the skewed client's own idea of now plays no part.
            skewed.publisher().publishAt(topic, message("at", before + 700), Instant.ofEpochMilli(before + 700));
        }
        Wait.until("4 entries handled", Duration.ofSeconds(10), () -> handledLog.size() == 4);
        for (String line : handledLog) {
            String[] dueAndAt = line.split(" ");
            long lateBy = Long.parseLong(dueAndAt[1]) - Long.parseLong(dueAndAt[0]);
            assertThat(lateBy).as("handled after its due time (%s)", line).isNotNegative().isLessThan(BOUND_MILLIS);
        }
    }

    @Test
    void aKeyedDelayedMessageGoesToItsKeysPartitionAndCanBeListedAndCancelled() {
        String topic = "parted";
        Bus bus = bus(BusConfig.builder(target().uri()).partitions(topic, 4));
        Publisher publisher = bus.publisher();
        String keep = publisher.publish(topic, Message.of("t", new byte[] {1}).withKey("customer-7"),
                Duration.ofSeconds(1));
        String cancel = publisher.publish(topic, Message.of("t", new byte[] {2}).withKey("customer-8"),
                Duration.ofMinutes(5));
        assertThat(bus.scheduled().count(topic)).isEqualTo(2);
        List<Scheduled.ScheduledEntry> listed = bus.scheduled().list(topic, 10);
        assertThat(listed).extracting(Scheduled.ScheduledEntry::id).containsExactly(keep, cancel);
        assertThat(listed.get(0).message().key()).isEqualTo("customer-7");
        assertThat(listed.get(0).attempts()).isZero();
        assertThat(listed.get(0).forGroup()).isNull();
        assertThat(bus.scheduled().cancel(topic, cancel)).isTrue();
        assertThat(bus.scheduled().cancel(topic, cancel)).as("cancelled twice").isFalse();

        List<Delivery> got = new CopyOnWriteArrayList<>();
        bus.subscribe(topic, "g", "c", got::add, SubscribeOptions.builder().blockTime(Duration.ofMillis(500)).build());
        Wait.until("the kept entry handled", Duration.ofSeconds(10), () -> got.size() == 1);
        int partition = Partitioner.partitionOf("customer-7", 4);
        assertThat(got.get(0).streamId()).endsWith("@" + partition);
        assertThat(keep).endsWith("@" + partition);
        assertThat(bus.scheduled().count(topic)).isZero();
    }

    @Test
    void aDueEntryWhoseFieldsAreMissingIsDeadLetteredAndReportedAndAForeignOneDoesNotBreakTheListing() {
        String topic = "foreign";
        List<DeadLetter> deadLetters = new CopyOnWriteArrayList<>();
        List<Throwable> loopErrors = new CopyOnWriteArrayList<>();
        Bus bus = bus(BusConfig.builder(target().uri()).listener(new BusListener() {
            @Override
            public void onDeadLetter(DeadLetter deadLetter) {
                deadLetters.add(deadLetter);
            }

            @Override
            public void onLoopError(String loop, Throwable error) {
                loopErrors.add(error);
            }
        }));
        String good = bus.publisher().publish(topic, Message.of("t", new byte[] {1}), Duration.ofMinutes(5));
        dev.runbus.internal.redis.Keys keys = new dev.runbus.internal.redis.Keys(prefix);
        var redis = target().redis();
        // Written by another program: one id in the delay set without fields, one whose fields are not MessagePack,
        // both due in a minute (listed, not moved yet).
        long later = redisNow() + 60_000;
        redis.zadd(keys.delayed(topic), later, "no-fields");
        redis.zadd(keys.delayed(topic), later, "not-msgpack");
        redis.hset(keys.delayedEntries(topic), "not-msgpack", "plain text");

        List<Scheduled.ScheduledEntry> listed = bus.scheduled().list(topic, 10);

        assertThat(listed).extracting(Scheduled.ScheduledEntry::id).containsExactly(good);
        assertThat(loopErrors).as("the two entries the listing skipped are reported").singleElement()
                .satisfies(e -> assertThat(e.getMessage()).contains("no-fields", "not-msgpack"));

        // Now due: the one without fields is set aside as a dead letter and reported, not dropped.
        redis.zadd(keys.delayed(topic), 1, "no-fields");
        bus.subscribe(topic, "g", "c", d -> { }, SubscribeOptions.builder().blockTime(Duration.ofMillis(500)).build());
        Wait.until("the entry without fields reported as a dead letter", Duration.ofSeconds(10),
                () -> !deadLetters.isEmpty());
        assertThat(deadLetters).singleElement().satisfies(d -> {
            assertThat(d.topic()).isEqualTo(topic);
            assertThat(d.reason()).contains("no-fields", "fields are missing");
        });
        var dead = redis.xrange(keys.deadLetters(topic), io.lettuce.core.Range.create("-", "+"));
        assertThat(dead).singleElement().satisfies(e -> {
            assertThat(e.getId()).isEqualTo(deadLetters.get(0).id());
            assertThat(e.getBody()).containsEntry("dl:scheduled_id", "no-fields");
        });
        assertThat(bus.deadLetters().list(topic, null, 10)).extracting(DeadLetter::id)
                .containsExactly(dead.get(0).getId());
        assertThat(redis.zrange(keys.delayed(topic), 0, -1)).containsExactlyInAnyOrder("not-msgpack", good);
    }

    @Test
    void badArgumentsAreRefusedWithTheirName() {
        Bus bus = bus();
        assertThatThrownBy(() -> bus.publisher().publish("t", Message.of("t", new byte[0]), Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("delay");
        assertThatThrownBy(() -> bus.scheduled().list("t", 0)).hasMessageContaining("limit");
        assertThatThrownBy(() -> bus.scheduled().cancel("t", "x@1")).hasMessageContaining("one partition");
        assertThat(bus.scheduled().cancel("t", "nothing-here")).isFalse();
    }
}
