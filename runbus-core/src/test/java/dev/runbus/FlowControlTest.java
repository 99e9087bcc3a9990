package dev.runbus;

import static dev.runbus.testing.FlowJobs.body;
import static dev.runbus.testing.FlowJobs.job;
import static dev.runbus.testkit.Deployment.CLUSTER;
import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.testing.FlowBuses;
import dev.runbus.testing.FlowJobs;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;

/**
 * Per-key concurrency caps through the bus (docs/flow-control.md): a message with a flow key waits outside the stream
 * until its key has a free slot; a subscription with {@code flowCap} runs at most that many of one key at once, across
 * its group's consumers. Each test counts handler calls per key at every start and end (a handler ends before its
 * ack releases the slot, so the count here is never above the holds in Redis), and checks that every message runs
 * once and that no hold or waiting entry is left behind. The rate limits ({@code flowRate}) are here too.
 */
@OnDeployments({LOCAL, REDIS_62, CLUSTER})
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class FlowControlTest {

    private static final String TOPIC = "jobs";
    /** The partitions of the rate tests' topic. */
    private static final int PARTITIONS = 2;
    private final FlowBuses flow = new FlowBuses(TOPIC, this::target);
    private final String prefix = flow.prefix();

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    @AfterEach
    void cleanUp() {
        flow.close();
    }

    private Bus bus(int partitions) {
        return flow.bus(partitions);
    }

    private static SubscribeOptions.Builder capped(int cap) {
        return SubscribeOptions.builder().flowCap(cap).blockTime(Duration.ofMillis(200));
    }

    /** Members of a flow structure ({@code holds}, {@code queue}) over every partition of the topic. */
    private long flowMembers(String structure, int partitions) {
        return flow.members(structure, partitions);
    }

    @Test
    void aKeyNeverRunsMoreThanItsCap_acrossThreeConsumers_andEveryMessageRunsOnce() {
        int partitions = 4;
        int cap = 2;
        FlowJobs.PerKey perKey = new FlowJobs.PerKey();
        List<String> handled = new CopyOnWriteArrayList<>();
        for (int c = 0; c < 3; c++) {
            bus(partitions).subscribe(TOPIC, "g", "c" + c, d -> {
                perKey.start(d.message().flowKey());
                try {
                    Thread.sleep(2); // a handler's work: lets calls of one key overlap
                    handled.add(body(d));
                } finally {
                    perKey.end(d.message().flowKey());
                }
            }, capped(cap).concurrency(6).build());
        }
        Publisher publisher = flow.first().publisher();
        List<Message> batch = new ArrayList<>();
        for (int n = 0; n < 25; n++) {
            for (int k = 0; k < 6; k++) {
                if (k % 2 == 0) {
                    publisher.publish(TOPIC, job("k" + k, n));
                } else {
                    batch.add(job("k" + k, n));
                }
            }
        }
        publisher.publishAll(TOPIC, batch);

        Wait.until("150 messages handled", Duration.ofSeconds(60), () -> handled.size() >= 150);
        assertThat(new HashSet<>(handled)).as("each message once").hasSize(150);
        Wait.until("every slot released", Duration.ofSeconds(20), () -> flowMembers("holds", partitions) == 0);
        assertThat(handled).as("no message twice").hasSize(150);
        assertThat(perKey.most()).as("calls of one key at once").isLessThanOrEqualTo(cap);
        assertThat(flowMembers("queue", partitions)).as("nothing left waiting").isZero();
    }

    @Test
    void aKeyAtItsCapHoldsBackNoOtherKey_andACapOfOneRunsItsKeyInPublishOrder() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<String> handledA = new CopyOnWriteArrayList<>();
        Set<String> handledB = ConcurrentHashMap.newKeySet();
        FlowJobs.PerKey perKey = new FlowJobs.PerKey();
        bus(1).subscribe(TOPIC, "g", "c", d -> {
            String key = d.message().flowKey();
            perKey.start(key);
            try {
                if (key.equals("a") && body(d).equals("a-0")) {
                    release.await();
                }
                (key.equals("a") ? handledA : handledB).add(body(d));
            } finally {
                perKey.end(key);
            }
        }, capped(1).concurrency(4).build());
        Publisher publisher = flow.first().publisher();
        List<Message> many = new ArrayList<>();
        for (int n = 0; n < 300; n++) {
            many.add(job("a", n));
        }
        publisher.publishAll(TOPIC, many);
        publisher.publish(TOPIC, job("b", 0));

        Wait.until("b's message handled while a's first still runs", Duration.ofSeconds(20),
                () -> handledB.contains("b-0"));
        assertThat(handledA).as("a's others wait for its one slot").isEmpty();
        String stream = prefix + ":{" + TOPIC + "}:stream";
        assertThat(target().redis().xlen(stream)).as("in the stream: a's running entry and b's").isEqualTo(2);
        // b's ack follows its handler: waited for, not assumed (loaded run 62 found it still pending).
        Wait.until("b's entry acked: only a's running entry pending", Duration.ofSeconds(20),
                () -> target().redis().xpending(stream, "g").getCount() == 1);
        release.countDown();

        Wait.until("a's 300 handled", Duration.ofSeconds(60), () -> handledA.size() == 300);
        List<String> expected = new ArrayList<>();
        for (int n = 0; n < 300; n++) {
            expected.add("a-" + n);
        }
        assertThat(handledA).as("one slot: a's messages one after the other, in publish order")
                .containsExactlyElementsOf(expected);
        assertThat(perKey.most()).isEqualTo(1);
        Wait.until("every slot released", Duration.ofSeconds(20), () -> flowMembers("holds", 1) == 0);
    }

    @Test
    void waitingIsNotADelivery_eachMessageRunsAtItsFirstAttempt() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<Delivery> deliveries = new CopyOnWriteArrayList<>();
        bus(1).subscribe(TOPIC, "g", "c", d -> {
            deliveries.add(d);
            release.await();
        }, capped(1).concurrency(2).build());
        Publisher publisher = flow.first().publisher();
        for (int n = 0; n < 5; n++) {
            publisher.publish(TOPIC, job("a", n));
        }
        Wait.until("the first running", Duration.ofSeconds(20), () -> deliveries.size() == 1);
        String base = prefix + ":{" + TOPIC + "}:";
        assertThat(target().redis().xlen(base + "stream")).as("only the running one entered the stream").isEqualTo(1);
        assertThat(target().redis().xlen(base + "flow:parked")).as("the others wait outside it").isEqualTo(4);
        assertThat(target().redis().xpending(base + "stream", "g").getCount()).isEqualTo(1);
        release.countDown();

        Wait.until("all five handled", Duration.ofSeconds(30), () -> deliveries.size() == 5);
        assertThat(deliveries).extracting(Delivery::attempt).containsOnly(1L);
        assertThat(deliveries).extracting(Delivery::deliveryCount).containsOnly(1L);
        assertThat(deliveries).extracting(d -> d.message().flowKey()).containsOnly("a");
        Wait.until("nothing left parked", Duration.ofSeconds(20),
                () -> target().redis().xlen(base + "flow:parked") == 0 && flowMembers("holds", 1) == 0);
    }

    /**
     * A delayed message enters the stream when it is due, past the publisher's admission, with no slot: the slot is
     * confirmed before its handler starts, and with its key at the cap it waits again instead of running.
     */
    @Test
    void anEntryThatReachesTheStreamWithoutASlot_waitsAgainInsteadOfRunning() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<Delivery> deliveries = new CopyOnWriteArrayList<>();
        bus(1).subscribe(TOPIC, "g", "c", d -> {
            deliveries.add(d);
            if (body(d).equals("a-0")) {
                release.await();
            }
        }, capped(1).concurrency(2).build());
        Publisher publisher = flow.first().publisher();
        publisher.publish(TOPIC, job("a", 0));
        Wait.until("a-0 running", Duration.ofSeconds(20), () -> deliveries.size() == 1);
        publisher.publish(TOPIC, job("a", 1), Duration.ofMillis(50));
        String base = prefix + ":{" + TOPIC + "}:";
        Wait.until("a-1 due, read, and waiting again (or run)", Duration.ofSeconds(20),
                () -> target().redis().xlen(base + "flow:parked") == 1 || deliveries.size() > 1);
        assertThat(deliveries).as("a-1 did not run beside a-0").hasSize(1);
        assertThat(target().redis().xpending(base + "stream", "g").getCount()).as("a-0 alone pending").isEqualTo(1);
        release.countDown();

        Wait.until("a-1 handled", Duration.ofSeconds(20), () -> deliveries.size() == 2);
        assertThat(body(deliveries.get(1))).isEqualTo("a-1");
        assertThat(deliveries.get(1).attempt()).as("waiting was not an attempt").isEqualTo(1);
        Wait.until("every slot released", Duration.ofSeconds(20), () -> flowMembers("holds", 1) == 0);
    }

    /**
     * Delayed messages of one flow key on a topic of four partitions enter the stream of the flow key's partition,
     * where its slots are counted: with a cap of 1 none runs beside another. (They went to the partition of their
     * message key, or of none, and were each confirmed against another partition's count of the key.)
     */
    @Test
    void delayedMessagesOfAKeyOnAPartitionedTopic_areCountedWhereTheKeysSlotsAre() {
        int partitions = 4;
        FlowJobs.PerKey perKey = new FlowJobs.PerKey();
        List<String> handled = new CopyOnWriteArrayList<>();
        bus(partitions).subscribe(TOPIC, "g", "c", d -> {
            perKey.start(d.message().flowKey());
            try {
                Thread.sleep(20); // a handler's work: lets calls of one key overlap if the cap let them
                handled.add(body(d));
            } finally {
                perKey.end(d.message().flowKey());
            }
        }, capped(1).concurrency(8).build());
        for (int n = 0; n < 12; n++) {
            Message m = job("a", n);
            flow.first().publisher().publish(TOPIC, n % 2 == 0 ? m : m.withKey("order-" + n), Duration.ofMillis(50));
        }
        Wait.until("twelve handled", Duration.ofSeconds(60), () -> handled.size() == 12);
        assertThat(perKey.most()).as("calls of key a at once").isEqualTo(1);
        Wait.until("every slot released", Duration.ofSeconds(20), () -> flowMembers("holds", partitions) == 0);
    }

    @Test
    void aRetriedMessageWaitsForASlotAgain_andKeepsItsAttempts() {
        FlowJobs.PerKey perKey = new FlowJobs.PerKey();
        List<String> calls = new CopyOnWriteArrayList<>();
        Map<String, Long> succeededAt = new ConcurrentHashMap<>();
        bus(1).subscribe(TOPIC, "g", "c", d -> {
            perKey.start(d.message().flowKey());
            try {
                calls.add(body(d));
                if (d.attempt() == 1) {
                    throw new IllegalStateException("first attempt fails");
                }
                succeededAt.put(body(d), d.attempt());
            } finally {
                perKey.end(d.message().flowKey());
            }
        }, capped(1).concurrency(4).retryPolicy(RetryPolicy.fixed(Duration.ofMillis(50))).maxDeliveries(3).build());
        for (int n = 0; n < 10; n++) {
            flow.first().publisher().publish(TOPIC, job("a", n));
        }

        Wait.until("the ten succeeded", Duration.ofSeconds(60), () -> succeededAt.size() == 10);
        assertThat(succeededAt.values()).as("each at its second attempt").containsOnly(2L);
        assertThat(calls).as("each ran twice").hasSize(20);
        assertThat(perKey.most()).as("one slot, retries included").isEqualTo(1);
        assertThat(flow.first().deadLetters().list(TOPIC, null, 10)).isEmpty();
        Wait.until("every slot released", Duration.ofSeconds(20), () -> flowMembers("holds", 1) == 0
                && flowMembers("queue", 1) == 0);
    }

    /**
     * A key's cap changed while it runs: lowered from 10 to 2 with 10 running, nothing starts until fewer than 2 run;
     * back to the default, the waiting entries start at once, in the call that gave the cap back.
     */
    @Test
    void aCapChangedLive_admitsNothingUntilFewerRun_andRaisedAdmitsAtOnce() {
        Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
        Set<String> running = ConcurrentHashMap.newKeySet();
        Set<String> done = ConcurrentHashMap.newKeySet();
        Bus bus = bus(1);
        bus.subscribe(TOPIC, "g", "c", d -> {
            running.add(body(d));
            try {
                gates.computeIfAbsent(body(d), b -> new CountDownLatch(1)).await();
            } finally {
                running.remove(body(d));
                done.add(body(d));
            }
        }, capped(10).concurrency(16).build());
        for (int n = 0; n < 20; n++) {
            bus.publisher().publish(TOPIC, job("k", n));
        }
        Wait.until("ten running", Duration.ofSeconds(20), () -> running.size() == 10);
        String parked = prefix + ":{" + TOPIC + "}:flow:parked";
        assertThat(target().redis().xlen(parked)).isEqualTo(10);

        assertThat(bus.setFlowCap(TOPIC, "k", 2)).as("lowered: admits nothing").isZero();
        List<String> first = new ArrayList<>(running);
        first.subList(0, 7).forEach(b -> gates.get(b).countDown());
        Wait.until("seven done and their slots released", Duration.ofSeconds(20),
                () -> done.size() == 7 && flowMembers("holds", 1) <= 3);
        assertThat(flowMembers("holds", 1)).as("the three still running hold theirs").isEqualTo(3);
        assertThat(target().redis().xlen(parked)).as("nothing admitted at 3 of 2").isEqualTo(10);

        first.subList(7, 9).forEach(b -> gates.get(b).countDown());
        Wait.until("one admitted once one runs", Duration.ofSeconds(20), () -> done.size() == 9 && running.size() == 2);
        assertThat(target().redis().xlen(parked)).isEqualTo(9);

        assertThat(bus.clearFlowCap(TOPIC, "k")).as("back to 10 with 2 running: 8 admitted in the call").isEqualTo(8);
        assertThat(target().redis().xlen(parked)).isEqualTo(1);
        Wait.until("ten running again", Duration.ofSeconds(20), () -> running.size() == 10);

        for (int n = 0; n < 20; n++) {
            gates.computeIfAbsent("k-" + n, b -> new CountDownLatch(1)).countDown();
        }
        Wait.until("all twenty done", Duration.ofSeconds(30), () -> done.size() == 20);
        Wait.until("every slot released", Duration.ofSeconds(20), () -> flowMembers("holds", 1) == 0);
        assertThatThrownBy(() -> bus.setFlowCap(TOPIC, "k", -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0 or more");
    }

    @Test
    void aSecondGroupWithAFlowCapIsRefusedNamingTheFirst_andIsNotCreated() {
        Bus bus = bus(1);
        bus.subscribe(TOPIC, "workers", "c", d -> { }, capped(2).build());
        assertThatThrownBy(() -> bus.subscribe(TOPIC, "others", "c", d -> { }, capped(2).build()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("'workers'")
                .hasMessageContaining("One group per flow-controlled topic");
        String stream = prefix + ":{" + TOPIC + "}:stream";
        assertThat(target().redis().xinfoGroups(stream)).as("only the first group").hasSize(1);

        // The same group again (another consumer, another cap) is its own: it sets the cap.
        bus.subscribe(TOPIC, "workers", "c2", d -> { }, capped(3).build());
        assertThat(target().redis().hget(prefix + ":{" + TOPIC + "}:flow:caps", "\0cap")).isEqualTo("3");
    }

    /** The time Redis let the entry in: the milliseconds of its stream id ({@code ms-seq}, qualified {@code @p}). */
    private static long admittedAt(Delivery d) {
        String id = d.streamId();
        return Long.parseLong(id.substring(0, id.indexOf('-')));
    }

    /**
     * Rate limits per flow key (docs/flow-control.md, "Rate limits"): an entry's stream id is the time Redis let it
     * in, so the rate is read from the ids the handlers received: in every window of one second at most
     * {@code permits + burst} of one key, and over the whole run never faster than the rate. A key held back by its
     * rate holds back no other key.
     */
    @Test
    void aKeyIsLetInAtItsRateAcrossFourConsumers_andAnotherKeyIsNotHeldBack() {
        int permits = 20;
        int burst = 5;
        int messages = 80;
        Map<String, List<Long>> admitted = new ConcurrentHashMap<>();
        List<String> handled = new CopyOnWriteArrayList<>();
        for (int c = 0; c < 4; c++) {
            bus(PARTITIONS).subscribe(TOPIC, "g", "c" + c, d -> {
                admitted.computeIfAbsent(d.message().flowKey(), k -> new CopyOnWriteArrayList<>()).add(admittedAt(d));
                handled.add(body(d));
            }, SubscribeOptions.builder().flowRate(FlowRate.perSecond(permits).withBurst(burst)).concurrency(4)
                    .blockTime(Duration.ofMillis(200)).claimInterval(Duration.ofMillis(500)).build());
        }
        Publisher publisher = flow.first().publisher();
        for (int n = 0; n < messages; n++) {
            publisher.publish(TOPIC, job("busy", n));
        }
        long before = flow.redisMillis();
        for (int n = 0; n < 3; n++) {
            publisher.publish(TOPIC, job("quiet", n));
        }
        long after = flow.redisMillis();

        // (messages - burst) / permits = 3.75 s at the rate; the wait only bounds how long a failure takes to show.
        Wait.until("every message handled", Duration.ofSeconds(60), () -> handled.size() == messages + 3);
        assertThat(handled).as("each once").doesNotHaveDuplicates();
        List<Long> busy = new ArrayList<>(admitted.get("busy"));
        busy.sort(null);
        for (int i = 0; i + permits + burst < busy.size(); i++) {
            assertThat(busy.get(i + permits + burst) - busy.get(i))
                    .as("%d entries of one key let in within a second, from the %dth", permits + burst + 1, i)
                    .isGreaterThanOrEqualTo(1000);
        }
        // The quiet key's three are within its burst: let in by their publish calls, not behind the busy key's backlog.
        assertThat(admitted.get("quiet")).as("the quiet key's entries let in while they were published")
                .hasSize(3).allSatisfy(t -> assertThat(t).isBetween(before, after));
        long span = busy.get(busy.size() - 1) - busy.get(0);
        // GCRA: the nth entry after the burst no sooner than n intervals (50 ms) after the first (1 ms of the clock's
        // rounding each side).
        assertThat(span).as("first to last let in, ms").isGreaterThanOrEqualTo((messages - burst) * 1000L / permits - 2);
        System.out.printf("flow rate %d/s, burst %d (%s): %d entries of one key let in over %d ms: %.1f/s%n", permits,
                burst, deployment, messages, span, (messages - burst) * 1000.0 / span);
        Wait.until("nothing left waiting", Duration.ofSeconds(10), () -> flowMembers("queue", PARTITIONS) == 0
                && flowMembers("later", PARTITIONS) == 0 && flowMembers("holds", PARTITIONS) == 0);
    }

    /**
     * A key's own rate, set live: a faster one lets the key's waiting entries in at once; cleared, the group's again,
     * afresh.
     */
    @Test
    void aKeysRateSetLive_admitsWhatItAllowsAtOnce_andClearedIsTheGroupsAgain() {
        List<String> handled = new CopyOnWriteArrayList<>();
        Bus bus = bus(1);
        bus.subscribe(TOPIC, "g", "c", d -> handled.add(body(d)), SubscribeOptions.builder()
                .flowRate(FlowRate.of(1, Duration.ofMinutes(1))).blockTime(Duration.ofMillis(200)).build());
        for (int n = 0; n < 4; n++) {
            bus.publisher().publish(TOPIC, job("k", n));
        }
        Wait.until("the first handled", Duration.ofSeconds(20), () -> handled.size() == 1);
        assertThat(flowMembers("queue", 1)).as("three waiting for the rate of one a minute").isEqualTo(3);

        assertThat(bus.setFlowRate(TOPIC, "k", FlowRate.perSecond(1000).withBurst(10))).as("let in at once")
                .isEqualTo(3);
        Wait.until("all four handled", Duration.ofSeconds(20), () -> handled.size() == 4);

        assertThat(bus.clearFlowRate(TOPIC, "k")).isZero();
        bus.publisher().publish(TOPIC, job("k", 4)); // the group's rate, afresh: its burst of one
        bus.publisher().publish(TOPIC, job("k", 5));
        Wait.until("the first of the two handled", Duration.ofSeconds(20), () -> handled.size() == 5);
        assertThat(flowMembers("queue", 1)).as("the other waits for the rate of one a minute").isEqualTo(1);
        assertThat(handled).as("each once").doesNotHaveDuplicates();
    }

    /**
     * A key's own rate on a subscription that has a cap and no rate: its entries held back by the rate are let in when
     * due (the subscription ticks all the same), each at least an interval after the one before.
     */
    @Test
    void aKeysOwnRate_onASubscriptionWithACapOnly_letsItsEntriesInWhenDue() {
        List<Long> admitted = new CopyOnWriteArrayList<>();
        Bus bus = bus(1);
        bus.subscribe(TOPIC, "g", "c", d -> admitted.add(admittedAt(d)), capped(10).claimInterval(Duration.ofMillis(500))
                .build());
        assertThat(bus.setFlowRate(TOPIC, "k", FlowRate.perSecond(4))).isZero();
        for (int n = 0; n < 3; n++) {
            bus.publisher().publish(TOPIC, job("k", n));
        }
        Wait.until("all three let in and handled", Duration.ofSeconds(20), () -> admitted.size() == 3);
        List<Long> sorted = new ArrayList<>(admitted);
        sorted.sort(null);
        assertThat(sorted.get(2) - sorted.get(0)).as("first to last at 4 a second, ms").isGreaterThanOrEqualTo(498);
    }

    @Test
    void aCapIsRefusedWithOrderedConsumption_aRateIsNot_andTheRateChecksItsArguments() {
        assertThatThrownBy(() -> SubscribeOptions.builder().ordered(true).flowCap(1).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flowCap")
                .hasMessageContaining("one at a time");
        assertThat(SubscribeOptions.builder().ordered(true).flowRate(FlowRate.perSecond(1)).build().flowControlled())
                .isTrue();
        assertThatThrownBy(() -> FlowRate.perSecond(0)).hasMessageContaining("permits must be 1 or more");
        assertThatThrownBy(() -> FlowRate.perSecond(1).withBurst(0)).hasMessageContaining("burst must be 1 or more");
        assertThatThrownBy(() -> FlowRate.of(2_000_000, Duration.ofSeconds(1))).hasMessageContaining("1 µs");
        assertThat(SubscribeOptions.builder().flowRate(FlowRate.perSecond(1)).build().flowControlled()).isTrue();
    }

}
