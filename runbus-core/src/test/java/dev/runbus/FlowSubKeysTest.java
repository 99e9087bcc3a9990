package dev.runbus;

import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.testing.FlowBuses;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
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
 * Sub-keys (docs/flow-control.md, "Sub-keys"): a flow key's waiting messages take turns by sub-key, and a tenant
 * gains no share of the topic by spreading its work over many sub-keys. With a cap of 1 (and a topic cap of 1) the
 * messages run one at a time in the order Redis lets them in; everything is published before the group subscribes,
 * so that the whole backlog waits when the first slot opens.
 */
@OnDeployments({LOCAL, REDIS_62})
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FlowSubKeysTest {

    private static final String TOPIC = "jobs";
    private static final Duration WAIT = Duration.ofSeconds(20);
    private final FlowBuses flow = new FlowBuses(TOPIC, this::target);
    private final List<Message> handled = new CopyOnWriteArrayList<>();

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    @AfterEach
    void cleanUp() {
        flow.close();
    }

    private static Message job(String flowKey, String subKey, int n) {
        Message.Builder b = Message.builder("job", (subKey + "-" + n).getBytes(StandardCharsets.UTF_8))
                .flowKey(flowKey);
        return (subKey.isEmpty() ? b : b.flowSubKey(subKey)).build();
    }

    private List<Message> runAll(List<Message> backlog, SubscribeOptions.Builder options) {
        Bus bus = flow.bus(1);
        bus.publisher().publishAll(TOPIC, backlog);
        bus.subscribe(TOPIC, "g", "c", d -> handled.add(d.message()), options.concurrency(1).blockTime(Duration.ofMillis(200)).build());
        Wait.until(backlog.size() + " messages handled", WAIT, () -> handled.size() >= backlog.size());
        Wait.until("every slot given back", WAIT, () -> flow.members("holds", 1) == 0);
        assertThat(handled).as("each message once").hasSize(backlog.size());
        return handled;
    }

    /**
     * One conversation with 30 waiting and five with 2 each, in one tenant under a cap of 1: the five small ones are
     * done within the first two rounds of turns (12 messages), not after the big one's 30; each keeps its order.
     */
    @Test
    void aKeysSubKeysTakeTurns_soOneSubKeysBacklogDoesNotHoldUpTheOthers() {
        List<Message> backlog = new ArrayList<>();
        for (int n = 0; n < 30; n++) {
            backlog.add(job("tenant", "big", n));
        }
        for (int n = 0; n < 2; n++) {
            for (int s = 1; s <= 5; s++) {
                backlog.add(job("tenant", "small" + s, n));
            }
        }
        List<String> order = runAll(backlog, SubscribeOptions.builder().flowCap(1)).stream()
                .map(m -> new String(m.payload(), StandardCharsets.UTF_8)).toList();

        assertThat(order.subList(0, 12)).as("the first two rounds").containsExactly("big-0", "small1-0", "small2-0",
                "small3-0", "small4-0", "small5-0", "big-1", "small1-1", "small2-1", "small3-1", "small4-1",
                "small5-1");
        List<String> big = order.stream().filter(o -> o.startsWith("big-")).toList();
        assertThat(big).as("the big conversation in its own order")
                .isEqualTo(backlog.subList(0, 30).stream().map(m -> new String(m.payload(), StandardCharsets.UTF_8))
                        .toList());
        assertThat(handled.get(1).flowSubKey()).as("the handler sees the sub-key").isEqualTo("small1");
        assertThat(target().redis().hkeys(flow.key("tags"))).as("no tag of a key that drained is kept")
                .noneMatch(f -> f.startsWith("\0svt") || f.startsWith("\0sft"));
    }

    /**
     * Behind a topic cap of 1, a tenant whose 100 messages are spread over 100 sub-keys and one whose 100 have none:
     * the first 100 admissions go half and half, as for two tenants without sub-keys.
     */
    @Test
    void aTenantSpreadOverManySubKeysGetsItsTenantsShare_notOnePerSubKey() {
        List<Message> backlog = new ArrayList<>();
        for (int n = 0; n < 100; n++) {
            backlog.add(job("spread", "conversation-" + n, n));
            backlog.add(job("plain", "", n));
        }
        List<Message> order = runAll(backlog, SubscribeOptions.builder().flowTopicCap(1));
        Map<String, Long> first100 = order.subList(0, 100).stream().collect(Collectors.groupingBy(Message::flowKey,
                Collectors.counting()));
        assertThat(first100.get("spread")).as("the spread tenant's share of the first 100 (%s)", first100)
                .isBetween(48L, 52L);
        assertThat(order.stream().filter(m -> m.flowKey().equals("spread")).map(Message::flowSubKey).distinct())
                .as("every sub-key ran").hasSize(100);
    }

    @Test
    void aSubKeyNeedsAFlowKey_andIsCheckedAsOne() {
        assertThatThrownBy(() -> Message.builder("job", new byte[0]).flowSubKey("c").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs a flow key");
        assertThatThrownBy(() -> Message.builder("job", new byte[0]).flowKey("t").flowSubKey(""))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flow sub-key must not be empty");
        assertThatThrownBy(() -> Message.builder("job", new byte[0]).flowKey("t").flowSubKey("a\0b"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NUL");
        assertThatThrownBy(() -> Message.builder("job", new byte[0]).flowKey("t").flowSubKey("x".repeat(257)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("256");
        Message m = Message.builder("job", new byte[0]).flowKey("t").flowSubKey("c").build();
        assertThat(m.flowSubKey()).isEqualTo("c");
        assertThat(m.withFlowSubKey("d").flowSubKey()).isEqualTo("d");
        assertThatThrownBy(() -> Message.of("job", new byte[0]).withFlowSubKey("d"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs a flow key");
    }
}
