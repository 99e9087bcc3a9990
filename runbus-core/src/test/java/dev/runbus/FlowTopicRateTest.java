package dev.runbus;

import static dev.runbus.testing.FlowJobs.job;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;

/**
 * A rate for the whole topic (docs/flow-control.md, "A rate for the topic"): with {@code flowTopicRate}, the entries
 * of all flow keys together are let into the stream at most at that rate, on the Redis clock, the keys taking turns.
 * An entry's stream id is the time Redis let it in, so the tests read the rate and the turns from the ids the
 * handlers received.
 */
@OnDeployments({LOCAL, REDIS_62, CLUSTER})
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FlowTopicRateTest {

    private static final String TOPIC = "jobs";
    private static final Duration WAIT = Duration.ofSeconds(60);
    private final FlowBuses flow = new FlowBuses(TOPIC, this::target);
    private final List<Admission> admissions = new CopyOnWriteArrayList<>();

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    @AfterEach
    void cleanUp() {
        flow.close();
    }

    /** A delivery's flow key and stream id. */
    private record Admission(String flowKey, String streamId) {
        long millis() {
            return WireFormat.millisOf(streamId);
        }
    }

    private List<Admission> inAdmissionOrder() {
        List<Admission> sorted = new ArrayList<>(admissions);
        sorted.sort(Comparator.comparing(Admission::millis).thenComparing(
                a -> Long.parseLong(a.streamId().substring(a.streamId().indexOf('-') + 1))));
        return sorted;
    }

    private void publishSixKeysOfTen(Bus bus) {
        List<Message> batch = new ArrayList<>();
        for (int n = 0; n < 10; n++) {
            for (int k = 0; k < 6; k++) {
                batch.add(job("k" + k, n));
            }
        }
        bus.publisher().publishAll(TOPIC, batch);
    }

    private void subscribe(Bus bus, SubscribeOptions.Builder options) {
        bus.subscribe(TOPIC, "g", "c", d -> admissions.add(new Admission(d.message().flowKey(), d.streamId())),
                options.concurrency(8).blockTime(Duration.ofMillis(200)).claimInterval(Duration.ofMillis(500))
                        .build());
    }

    /**
     * Six keys with ten messages each, a topic rate of 20 a second with a burst of 5: in every second at most 25 let
     * in (burst + a second's rate), the sixty over at least (60 − 5) × 50 ms, the keys in turns.
     */
    @Test
    void theTopicsRateHoldsAcrossAllItsKeys_andTheKeysTakeTurns() {
        Bus bus = flow.bus(1);
        publishSixKeysOfTen(bus);
        subscribe(bus, SubscribeOptions.builder().flowTopicRate(FlowRate.perSecond(20).withBurst(5)));
        Wait.until("sixty handled", WAIT, () -> admissions.size() >= 60);

        List<Admission> order = inAdmissionOrder();
        for (int i = 0; i < order.size(); i++) {
            long from = order.get(i).millis();
            long inSecond = order.stream().filter(a -> a.millis() >= from && a.millis() < from + 1000).count();
            assertThat(inSecond).as("let in within a second from %d ms", from).isLessThanOrEqualTo(25);
        }
        // A stream id is the whole millisecond of its XADD, which comes a moment after the Redis TIME its admission was
        // reckoned on: the first id can fall in the next millisecond and the last one not, so the ids' distance may be
        // one millisecond short of the rate's (loaded run 112: 2,749 ms on a cluster).
        assertThat(order.get(59).millis() - order.get(0).millis()).as("first to last, ms")
                .isGreaterThanOrEqualTo(55 * 50 - 1);
        for (int turn = 0; turn < 10; turn++) {
            assertThat(new HashSet<>(order.subList(turn * 6, turn * 6 + 6).stream().map(Admission::flowKey).toList()))
                    .as("turn %d: every key once", turn).hasSize(6);
        }
    }

    /** A rate set live starts the topic afresh: raised, the waiting messages go in at once; cleared, back again. */
    @Test
    void aTopicRateSetLive_startsAfresh_andClearedGoesBackToTheSubscriptions() {
        Bus bus = flow.bus(1);
        publishSixKeysOfTen(bus);
        subscribe(bus, SubscribeOptions.builder().flowTopicRate(FlowRate.of(1, Duration.ofMinutes(1))));
        Wait.until("the burst of one let in", WAIT, () -> admissions.size() == 1);
        assertThat(flow.members("queue", 1)).as("held back by one a minute").isEqualTo(59);

        assertThat(bus.setFlowTopicRate(TOPIC, FlowRate.of(1, Duration.ofMinutes(1)).withBurst(40)))
                .as("let in by the call: the new rate's burst").isEqualTo(40);
        Wait.until("41 handled", WAIT, () -> admissions.size() >= 41);
        assertThat(target().redis().hget(flow.key("caps"), "\0topic_rate_set")).isNotNull();

        assertThat(bus.clearFlowTopicRate(TOPIC)).as("back to one a minute, afresh: its burst of one").isEqualTo(1);
        Wait.until("42 handled", WAIT, () -> admissions.size() >= 42);
        assertThat(flow.members("queue", 1)).isEqualTo(18);
        assertThat(target().redis().hget(flow.key("caps"), "\0topic_rate_set")).isNull();
    }

    private void publishFiftyOfK0(Bus bus, int from) {
        List<Message> batch = new ArrayList<>();
        for (int n = from; n < from + 50; n++) {
            batch.add(job("k0", n));
        }
        bus.publisher().publishAll(TOPIC, batch);
    }

    /**
     * A topic rate of tens of thousands a second lets in its burst and no more within one call: its state is kept to
     * the microsecond (it was kept to 0.1 ms, so a step of 0.04 ms rounded to nothing and every waiting message went
     * in at once). The rate in force set again starts nothing afresh; another one does.
     */
    @Test
    void aTopicRateOfTensOfThousandsASecond_letsInItsBurst_andTheSameRateSetAgainChangesNothing() {
        Bus bus = flow.bus(1);
        publishFiftyOfK0(bus, 0);
        subscribe(bus, SubscribeOptions.builder().flowTopicRate(FlowRate.of(1, Duration.ofMinutes(1))));
        Wait.until("the burst of one", WAIT, () -> admissions.size() == 1);

        assertThat(bus.setFlowTopicRate(TOPIC, FlowRate.perSecond(25_000))).as("its burst of one").isEqualTo(1);
        Wait.until("the fifty, at 25,000 a second", WAIT, () -> admissions.size() == 50);

        publishFiftyOfK0(bus, 50);
        assertThat(bus.setFlowTopicRate(TOPIC, FlowRate.of(1, Duration.ofMinutes(1)))).as("another rate: afresh")
                .isEqualTo(1);
        assertThat(bus.setFlowTopicRate(TOPIC, FlowRate.of(1, Duration.ofMinutes(1)))).as("the same rate again")
                .isZero();
        assertThat(bus.clearFlowTopicRate(TOPIC)).as("the group's, the same rate").isZero();
    }

    /** The same for a key's own rate: 50,000 a second lets in its burst of one in the call, not all fifty. */
    @Test
    void aKeysRateOfFiftyThousandASecond_letsInItsBurstInTheCall() {
        Bus bus = flow.bus(1);
        publishFiftyOfK0(bus, 0);
        subscribe(bus, SubscribeOptions.builder().flowRate(FlowRate.of(1, Duration.ofMinutes(1))));
        Wait.until("the burst of one", WAIT, () -> admissions.size() == 1);

        assertThat(bus.setFlowRate(TOPIC, "k0", FlowRate.perSecond(50_000))).as("its burst of one").isEqualTo(1);
        Wait.until("the fifty", WAIT, () -> admissions.size() == 50);
    }

    private static Message costing(String flowKey, String body, int cost) {
        return Message.builder("job", body.getBytes(java.nio.charset.StandardCharsets.UTF_8)).flowKey(flowKey)
                .cost(cost).build();
    }

    /**
     * Costs (docs/flow-control.md, "Costs"): under a key's rate of 10 a second, a message of cost 5 goes in at once and
     * the next waits the 500 ms it cost; under a topic cap of 1, a key whose messages cost 3 gets a third of the turns
     * of a key whose messages cost 1.
     */
    @Test
    void aMessagesCostCountsAgainstTheRate_andMovesItsKeysTurn() {
        Bus bus = flow.bus(1);
        bus.publisher().publishAll(TOPIC, List.of(costing("k0", "five", 5), costing("k0", "one", 1),
                costing("k0", "two", 1)));
        subscribe(bus, SubscribeOptions.builder().flowRate(FlowRate.perSecond(10)));
        Wait.until("three handled", WAIT, () -> admissions.size() == 3);
        List<Admission> order = inAdmissionOrder();
        assertThat(order.get(1).millis() - order.get(0).millis()).as("after the message of cost 5, ms")
                .isGreaterThanOrEqualTo(499);
        assertThat(order.get(2).millis() - order.get(1).millis()).as("after one of cost 1, ms")
                .isGreaterThanOrEqualTo(99);
    }

    @Test
    void keysTakeTurnsByCost_underATopicCap() {
        Bus bus = flow.bus(1);
        List<Message> batch = new ArrayList<>();
        for (int n = 0; n < 20; n++) {
            batch.add(costing("dear", "dear-" + n, 3));
            batch.add(costing("cheap", "cheap-" + n, 1));
        }
        bus.publisher().publishAll(TOPIC, batch);
        subscribe(bus, SubscribeOptions.builder().flowTopicCap(1));
        Wait.until("forty handled", WAIT, () -> admissions.size() == 40);
        List<String> first = inAdmissionOrder().subList(0, 16).stream().map(Admission::flowKey).toList();
        assertThat(first.stream().filter("cheap"::equals).count()).as("cheap's turns of the first 16, in %s", first)
                .isBetween(11L, 13L);
    }

    @Test
    void aTopicRateIsRefusedOnAPartitionedTopic() {
        Bus bus = flow.bus(2);
        assertThatThrownBy(() -> bus.subscribe(TOPIC, "g", "c", d -> { },
                SubscribeOptions.builder().flowTopicRate(FlowRate.perSecond(5)).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flowTopicRate")
                .hasMessageContaining("2 partitions");
        assertThatThrownBy(() -> bus.setFlowTopicRate(TOPIC, FlowRate.perSecond(5)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unpartitioned topic");
        assertThat(SubscribeOptions.builder().flowTopicRate(FlowRate.perSecond(5)).ordered(true).build().ordered())
                .as("an ordered group takes a topic's rate (on one partition)").isTrue();
    }
}
