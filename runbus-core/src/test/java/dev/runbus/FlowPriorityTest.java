package dev.runbus;

import static dev.runbus.testing.FlowJobs.body;
import static dev.runbus.testkit.Deployment.CLUSTER;
import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.internal.redis.WireFormat;
import dev.runbus.testing.FlowBuses;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;

/**
 * Priorities among a flow key's waiting messages, and between keys behind a topic cap (docs/flow-control.md,
 * "Priorities"): with a cap of 1, the messages run one at a time in the order Redis lets them in, so the handler's
 * order is the order of admission. A blocker holds the one slot while the others are published; its release starts
 * the line.
 */
@OnDeployments({LOCAL, REDIS_62, CLUSTER})
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FlowPriorityTest {

    private static final String TOPIC = "jobs";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final FlowBuses flow = new FlowBuses(TOPIC, this::target);
    private final List<String> handled = new CopyOnWriteArrayList<>();
    private final List<Integer> priorities = new CopyOnWriteArrayList<>();
    private final CountDownLatch blockerMayEnd = new CountDownLatch(1);
    /** Messages (by body) whose handler waits for their latch. */
    private final java.util.Map<String, CountDownLatch> holdUntil = new java.util.concurrent.ConcurrentHashMap<>();
    private final List<String> started = new CopyOnWriteArrayList<>();

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    @AfterEach
    void cleanUp() {
        blockerMayEnd.countDown();
        holdUntil.values().forEach(CountDownLatch::countDown);
        flow.close();
    }

    private static Message job(String name, int priority) {
        return Message.builder("job", name.getBytes(StandardCharsets.UTF_8)).flowKey("tenant").priority(priority)
                .build();
    }

    /** A subscription with a cap of 1, and the blocker running in the key's one slot. */
    private Publisher blocked(SubscribeOptions.Builder options) {
        Bus bus = flow.bus(1);
        bus.subscribe(TOPIC, "g", "c", d -> {
            if (body(d).equals("blocker")) {
                blockerMayEnd.await();
            }
            handled.add(body(d));
            priorities.add(d.message().priority());
        }, options.flowCap(1).concurrency(4).blockTime(Duration.ofMillis(200)).build());
        Publisher publisher = bus.publisher();
        publisher.publish(TOPIC, job("blocker", Message.DEFAULT_PRIORITY));
        Wait.until("the blocker to hold the key's slot", WAIT, () -> flow.members("held", 1) == 1
                && flow.members("queue", 1) == 0);
        return publisher;
    }

    private List<String> afterTheBlocker(int expected) {
        blockerMayEnd.countDown();
        Wait.until(expected + " messages after the blocker", WAIT, () -> handled.size() >= expected + 1);
        assertThat(handled.get(0)).isEqualTo("blocker");
        return handled.subList(1, handled.size());
    }

    @Test
    void aKeysMostUrgentWaitingMessageGoesFirst_andEachPriorityInPublishOrder() {
        Publisher publisher = blocked(SubscribeOptions.builder());
        for (int n = 1; n <= 2; n++) {
            publisher.publish(TOPIC, job("low-" + n, 0));
            publisher.publish(TOPIC, job("default-" + n, Message.DEFAULT_PRIORITY));
            publisher.publish(TOPIC, job("high-" + n, 9));
            publisher.publish(TOPIC, job("seven-" + n, 7));
        }
        assertThat(flow.members("queue", 1)).as("waiting").isEqualTo(8);

        assertThat(afterTheBlocker(8)).containsExactly("high-1", "high-2", "seven-1", "seven-2", "default-1",
                "default-2", "low-1", "low-2");
        assertThat(priorities.subList(1, priorities.size())).as("the priorities the handler saw")
                .containsExactly(9, 9, 7, 7, 4, 4, 0, 0);
    }

    /**
     * With an aging of 200 ms a step, a message of priority 0 that waited 1.8 s is worth a priority-9 message
     * parked now: one that waited longer goes before the more urgent ones parked after that time, and one parked
     * after them waits behind them.
     */
    @Test
    void aLessUrgentMessageThatWaitedLongerThanTheStepsBetweenGoesFirst() {
        Publisher publisher = blocked(SubscribeOptions.builder().flowPriorityAging(Duration.ofMillis(200)));
        String parkedAt = publisher.publish(TOPIC, job("old-low", 0));
        long agedBy = WireFormat.millisOf(parkedAt) + 9 * 200 + 100;
        Wait.until("the Redis clock 1.9 s past old-low's park", WAIT, () -> flow.redisMillis() > agedBy);
        publisher.publish(TOPIC, job("high-1", 9));
        publisher.publish(TOPIC, job("default", Message.DEFAULT_PRIORITY));
        publisher.publish(TOPIC, job("high-2", 9));
        publisher.publish(TOPIC, job("new-low", 0));

        assertThat(afterTheBlocker(5)).containsExactly("old-low", "high-1", "high-2", "default", "new-low");
    }

    /**
     * A message that reaches the stream without a slot (a delayed one, when due) and is put back to wait takes its
     * priority's place: first among its priority's waiting messages, behind the more urgent ones (before priorities,
     * it went first of all).
     */
    @Test
    void aDelayedMessagePutBackToWait_waitsInItsPrioritysPlace() {
        Publisher publisher = blocked(SubscribeOptions.builder());
        publisher.publish(TOPIC, job("default-1", Message.DEFAULT_PRIORITY));
        publisher.publish(TOPIC, job("low-1", 0));
        publisher.publish(TOPIC, job("delayed-low", 0), Duration.ofMillis(300));
        publisher.publish(TOPIC, job("default-2", Message.DEFAULT_PRIORITY));
        Wait.until("the delayed message due, read, and put back to wait", WAIT,
                () -> flow.members("queue", 1) == 4);

        assertThat(afterTheBlocker(4)).containsExactly("default-1", "default-2", "delayed-low", "low-1");
    }

    /**
     * A message put back to wait heads its priority's line with a new park time; the line's age is still that of
     * the older message behind it. With an aging of 200 ms a step: old-default (4) parked at T is worth a priority-9
     * message parked at T + 1 s; delayed-default (4), put back at T + 600 ms or later, heads the line; high (9) is
     * parked after T + 1.05 s. The line of 4 goes first (its head, then old-default); it went after high when its
     * age was its head's.
     */
    @Test
    void aMessagePutBackAtTheHeadOfItsLine_doesNotMakeTheLineYounger() {
        Publisher publisher = blocked(SubscribeOptions.builder().flowPriorityAging(Duration.ofMillis(200)));
        String parkedAt = publisher.publish(TOPIC, job("old-default", Message.DEFAULT_PRIORITY));
        long t = WireFormat.millisOf(parkedAt);
        publisher.publish(TOPIC, job("delayed-default", Message.DEFAULT_PRIORITY), Duration.ofMillis(600));
        Wait.until("the delayed message put back to wait", WAIT, () -> flow.members("queue", 1) == 2);
        Wait.until("the Redis clock 1.05 s past old-default's park", WAIT, () -> flow.redisMillis() > t + 1_050);
        publisher.publish(TOPIC, job("high", 9));

        assertThat(afterTheBlocker(3)).containsExactly("delayed-default", "old-default", "high");
    }

    private static Message job(String key, String name, int priority) {
        return Message.builder("job", name.getBytes(StandardCharsets.UTF_8)).flowKey(key).priority(priority).build();
    }

    /**
     * A subscription with a topic cap of 1, and the blocker (key z) running in the topic's one slot: the other keys'
     * messages then take the slot one at a time, between keys, in the order Redis lets them in.
     */
    private Publisher blockedTopic(SubscribeOptions.Builder options) {
        Bus bus = flow.bus(1);
        holdUntil.put("blocker", blockerMayEnd);
        bus.subscribe(TOPIC, "g", "c", d -> {
            started.add(body(d));
            CountDownLatch hold = holdUntil.get(body(d));
            if (hold != null) {
                hold.await();
            }
            handled.add(body(d));
        }, options.flowTopicCap(1).concurrency(4).blockTime(Duration.ofMillis(200)).build());
        Publisher publisher = bus.publisher();
        publisher.publish(TOPIC, job("z", "blocker", Message.DEFAULT_PRIORITY));
        Wait.until("the blocker to hold the topic's slot", WAIT, () -> flow.members("held", 1) == 1
                && flow.members("queue", 1) == 0);
        return publisher;
    }

    /**
     * Between keys, behind a topic cap, priorities are strict (docs/flow-control.md, "Priorities"): the key whose
     * next message is the most urgent takes the slot, and keys of one priority take turns by start tag. Key a's
     * priority-9 message, parked after its priority-4 one, moves a ahead of b, whose priority-4 message waited
     * first; then a and b take their turns of priority 4 (a's urgent turn was taken in its own lane), before c's 0.
     */
    @Test
    void betweenKeys_theMostUrgentNextMessageTakesTheTopicsSlot_andKeysOfOnePriorityTakeTurns() {
        Publisher publisher = blockedTopic(SubscribeOptions.builder());
        publisher.publish(TOPIC, job("b", "b-default", Message.DEFAULT_PRIORITY));
        publisher.publish(TOPIC, job("a", "a-default", Message.DEFAULT_PRIORITY));
        publisher.publish(TOPIC, job("c", "c-low", 0));
        publisher.publish(TOPIC, job("a", "a-high", 9));
        publisher.publish(TOPIC, job("d", "d-seven", 7));
        assertThat(flow.members("queue", 1)).as("waiting").isEqualTo(5);

        List<String> order = afterTheBlocker(5);
        assertThat(order.subList(0, 2)).containsExactly("a-high", "d-seven");
        assertThat(order.subList(2, 4)).containsExactlyInAnyOrder("a-default", "b-default");
        assertThat(order.get(4)).isEqualTo("c-low");
    }

    /**
     * Aging between keys as within one: with 200 ms a step, key c's priority-0 message that waited 1.9 s goes before
     * the priority-9 messages of key b parked after it; d's, parked after them all, waits behind them.
     */
    @Test
    void betweenKeys_aLessUrgentMessageThatWaitedLongerThanTheStepsBetweenGoesFirst() {
        Publisher publisher = blockedTopic(SubscribeOptions.builder().flowPriorityAging(Duration.ofMillis(200)));
        String parkedAt = publisher.publish(TOPIC, job("c", "c-old-low", 0));
        long agedBy = WireFormat.millisOf(parkedAt) + 9 * 200 + 100;
        Wait.until("the Redis clock 1.9 s past c-old-low's park", WAIT, () -> flow.redisMillis() > agedBy);
        publisher.publish(TOPIC, job("b", "b-high-1", 9));
        publisher.publish(TOPIC, job("a", "a-default", Message.DEFAULT_PRIORITY));
        publisher.publish(TOPIC, job("b", "b-high-2", 9));
        publisher.publish(TOPIC, job("d", "d-new-low", 0));

        assertThat(afterTheBlocker(5)).containsExactly("c-old-low", "b-high-1", "b-high-2", "a-default", "d-new-low");
    }

    /**
     * A caller naming the eleven keys of before priority lanes is refused, saying how many it takes: it could not
     * see the keys waiting in the other lanes, and would leave them waiting.
     */
    @Test
    void aCallNamingTheElevenKeysOfBeforeLanes_isRefused() throws Exception {
        blockedTopic(SubscribeOptions.builder());
        String script;
        try (java.io.InputStream in = getClass().getResourceAsStream("/dev/runbus/lua/flow.lua")) {
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String[] eleven = java.util.Arrays.copyOf(new dev.runbus.internal.redis.Keys(flow.prefix()).flow(TOPIC), 11);
        assertThatThrownBy(() -> target().redis().eval(script, io.lettuce.core.ScriptOutputType.MULTI, eleven, "park",
                "x", "type", "job", "payload", "x-high", "priority", "9"))
                .hasMessageContaining("FLOWKEYS").hasMessageContaining("21 keys");
        assertThat(flow.members("queue", 1)).as("nothing parked").isZero();
    }

    /**
     * Each priority keeps its own turns: key u's turns in its lane do not move the default lane's virtual time, so
     * key c, which joins the default lane after u ran three times and while b runs, takes turns with b at once
     * instead of waiting behind b's turns by u's number (one virtual time for all lanes did that).
     */
    @Test
    void turnsInOneLane_doNotPushBackAKeyJoiningAnother() {
        CountDownLatch b1MayEnd = new CountDownLatch(1);
        holdUntil.put("b-1", b1MayEnd);
        try {
            Publisher publisher = blockedTopic(SubscribeOptions.builder());
            for (int n = 1; n <= 4; n++) {
                publisher.publish(TOPIC, job("b", "b-" + n, Message.DEFAULT_PRIORITY));
            }
            for (int n = 1; n <= 3; n++) {
                publisher.publish(TOPIC, job("u", "u-" + n, 7));
            }
            blockerMayEnd.countDown();
            Wait.until("u's three run, then b-1 holds the topic's slot", WAIT, () -> started.contains("b-1"));
            publisher.publish(TOPIC, job("c", "c-1", Message.DEFAULT_PRIORITY));
            publisher.publish(TOPIC, job("c", "c-2", Message.DEFAULT_PRIORITY));
        } finally {
            b1MayEnd.countDown();
        }
        Wait.until("all ten", WAIT, () -> handled.size() == 10);
        assertThat(handled).containsExactly("blocker", "u-1", "u-2", "u-3", "b-1", "c-1", "b-2", "c-2", "b-3", "b-4");
    }

    @Test
    void aPriorityOutOfRange_orWithoutAFlowKey_isRefused() {
        assertThatThrownBy(() -> Message.builder("job", new byte[0]).flowKey("t").priority(10))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0 to 9");
        assertThatThrownBy(() -> Message.builder("job", new byte[0]).flowKey("t").priority(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0 to 9");
        assertThatThrownBy(() -> Message.builder("job", new byte[0]).priority(9).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flow key");
        assertThatThrownBy(() -> Message.of("job", new byte[0]).withPriority(9))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flow key");
        assertThat(Message.builder("job", new byte[0]).flowKey("t").build().withPriority(9).priority()).isEqualTo(9);
        assertThat(Message.builder("job", new byte[0]).priority(Message.DEFAULT_PRIORITY).build().priority())
                .isEqualTo(Message.DEFAULT_PRIORITY);
        assertThatThrownBy(() -> Message.builder("job", new byte[0]).flowKey("t").cost(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 to 1000000");
        assertThatThrownBy(() -> Message.builder("job", new byte[0]).cost(3).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flow key");
        assertThat(Message.builder("job", new byte[0]).flowKey("t").cost(3).build().cost()).isEqualTo(3);
        assertThatThrownBy(() -> SubscribeOptions.builder().flowCap(1).flowPriorityAging(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flowPriorityAging");
    }

}
