package dev.runbus;

import static dev.runbus.testing.FlowJobs.body;
import static dev.runbus.testing.FlowJobs.job;
import static dev.runbus.testkit.Deployment.LOCAL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.testing.FlowBuses;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;

/**
 * Fair shares by handler time ({@link FlowFairness#BY_HANDLER_TIME}, docs/flow-control.md): behind a topic cap, two
 * backlogged keys of equal weight, one whose handlers take ten times as long as the other's, get the same handler
 * time, not the same number of messages. The shares are read from the handlers' own timings while both keys still
 * had messages waiting; the same run counted by declared cost gives the slow key most of the time, which is what the
 * option is for.
 */
@OnDeployments(LOCAL) // the script is the same on a cluster (FlowTopicCapTest runs it there); this one measures time
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FlowFairByHandlerTimeTest {

    private static final String TOPIC = "jobs";
    private static final long SLOW_MILLIS = 150;
    private static final long QUICK_MILLIS = 15;
    private static final int SLOW = 20;
    private static final int QUICK = 150;
    private final FlowBuses flow = new FlowBuses(TOPIC, this::target);

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    @AfterEach
    void cleanUp() {
        flow.close();
    }

    /** One handler call: its key, when it started and ended (nanoseconds). */
    private record Call(String flowKey, long started, long ended) {
    }

    @Test
    void byHandlerTime_twoBackloggedKeysGetTheSameHandlerTime_notTheSameCount() {
        Map<String, Long> time = timeShares(FlowFairness.BY_HANDLER_TIME);
        double ratio = (double) time.get("slow") / time.get("quick");
        assertThat(ratio).as("slow ÷ quick handler time while both waited (ms: %s)", time).isBetween(0.6, 1.67);
    }

    @Test
    void byCost_theSameKeysGetTheSameCount_soTheSlowOneTakesMostOfTheTime() {
        Map<String, Long> time = timeShares(FlowFairness.BY_COST);
        double ratio = (double) time.get("slow") / time.get("quick");
        assertThat(ratio).as("slow ÷ quick handler time while both waited (ms: %s)", time).isGreaterThan(2.5);
    }

    @Test
    void byHandlerTimeNeedsATopicCapOrATopicRate() {
        assertThatThrownBy(() -> SubscribeOptions.builder().flowCap(2).flowFairness(FlowFairness.BY_HANDLER_TIME)
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flowTopicCap");
        assertThat(SubscribeOptions.builder().flowTopicRate(FlowRate.perSecond(10))
                .flowFairness(FlowFairness.BY_HANDLER_TIME).build().flowFairness())
                .isEqualTo(FlowFairness.BY_HANDLER_TIME);
        assertThat(SubscribeOptions.defaults().flowFairness()).isEqualTo(FlowFairness.BY_COST);
        assertThatThrownBy(() -> SubscribeOptions.builder().ordered(true).flowTopicRate(FlowRate.perSecond(10))
                .flowFairness(FlowFairness.BY_HANDLER_TIME).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ordered");
        assertThatThrownBy(() -> flow.bus(1).subscribeBatch(TOPIC, "g", "c", batch -> { }, SubscribeOptions.builder()
                .flowTopicCap(2).flowFairness(FlowFairness.BY_HANDLER_TIME).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("BatchHandler");
    }

    /**
     * Runs the slow key's {@value #SLOW} messages and the quick key's {@value #QUICK}, all waiting before the group
     * subscribes, one at a time (a topic cap of 1), and returns each key's handler time (ms) over the calls that
     * started while both keys still had messages to start.
     */
    private Map<String, Long> timeShares(FlowFairness fairness) {
        Bus bus = flow.bus(1);
        List<Message> batch = new ArrayList<>();
        for (int n = 0; n < QUICK; n++) {
            if (n < SLOW) {
                batch.add(job("slow", n));
            }
            batch.add(job("quick", n));
        }
        bus.publisher().publishAll(TOPIC, batch);
        List<Call> calls = new CopyOnWriteArrayList<>();
        List<String> handled = new CopyOnWriteArrayList<>();
        bus.subscribe(TOPIC, "g", "c1", d -> {
            String key = d.message().flowKey();
            long started = System.nanoTime();
            Thread.sleep(key.equals("slow") ? SLOW_MILLIS : QUICK_MILLIS); // the handler's work
            calls.add(new Call(key, started, System.nanoTime()));
            handled.add(body(d));
        }, SubscribeOptions.builder().flowTopicCap(1).flowFairness(fairness).concurrency(2)
                .blockTime(Duration.ofMillis(200)).build());

        Wait.until("every message handled", Duration.ofSeconds(30), () -> handled.size() >= SLOW + QUICK);
        assertThat(new HashSet<>(handled)).as("each message once").hasSize(SLOW + QUICK);
        assertThat(handled).as("no message twice").hasSize(SLOW + QUICK);
        Wait.until("every slot given back", Duration.ofSeconds(10), () -> flow.members("holds", 1) == 0);
        // Both keys were backlogged until the first of them started its last message.
        long bothWaited = calls.stream().collect(Collectors.groupingBy(Call::flowKey,
                        Collectors.reducing(Long.MIN_VALUE, Call::started, Math::max)))
                .values().stream().mapToLong(Long::longValue).min().orElseThrow();
        Map<String, Long> time = calls.stream().filter(c -> c.started() < bothWaited).collect(Collectors.groupingBy(
                Call::flowKey, Collectors.summingLong(c -> TimeUnit.NANOSECONDS.toMillis(c.ended() - c.started()))));
        Map<String, Long> count = calls.stream().filter(c -> c.started() < bothWaited).collect(Collectors.groupingBy(
                Call::flowKey, Collectors.counting()));
        System.out.printf("%s on %s: while both keys waited, handler time (ms) %s, calls %s%n", fairness, deployment,
                time, count);
        return time;
    }
}
