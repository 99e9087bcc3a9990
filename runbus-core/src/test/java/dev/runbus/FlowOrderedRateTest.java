package dev.runbus;

import static dev.runbus.testing.FlowJobs.body;
import static dev.runbus.testkit.Deployment.CLUSTER;
import static dev.runbus.testkit.Deployment.LOCAL;
import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;

/**
 * Rates on an ordered topic (docs/flow-control.md, "Ordered topics"): the entries of a flow key are let into its
 * partition's stream at the key's rate, with no hold, and the partition's owner runs them in stream order, so each
 * message key's messages (all of one flow key) keep their publish order. A key held back by its rate holds back no
 * other key of its partition: their entries enter the stream past its waiting ones.
 */
@OnDeployments({LOCAL, CLUSTER})
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FlowOrderedRateTest {

    private static final String TOPIC = "jobs";
    private static final int PARTITIONS = 2;
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

    /** Message {@code n} of message key {@code key} in flow key {@code flowKey}; its payload is {@code key-n}. */
    private static Message job(String flowKey, String key, int n) {
        return Message.builder("job", (key + "-" + n).getBytes(StandardCharsets.UTF_8)).flowKey(flowKey).key(key)
                .build();
    }

    /** One handler call: its flow key, its message key and number, and when Redis let its entry in. */
    private record Call(String flowKey, String key, int n, long admittedAt) {
    }

    @Test
    void anOrderedGroupLetsAKeyInAtItsRate_eachMessageKeyInPublishOrder_andOtherKeysPastIt() {
        int permits = 20;
        int burst = 5;
        int busy = 40;
        List<Call> calls = new CopyOnWriteArrayList<>();
        for (int c = 0; c < 2; c++) {
            flow.bus(PARTITIONS).subscribe(TOPIC, "g", "c" + c, d -> {
                String[] payload = body(d).split("-");
                String id = d.streamId();
                calls.add(new Call(d.message().flowKey(), payload[0], Integer.parseInt(payload[1]),
                        Long.parseLong(id.substring(0, id.indexOf('-')))));
            }, SubscribeOptions.builder().ordered(true).flowRate(FlowRate.perSecond(permits).withBurst(burst))
                    .concurrency(2).blockTime(Duration.ofMillis(200)).claimInterval(Duration.ofMillis(500)).build());
        }
        Publisher publisher = flow.first().publisher();
        List<Message> busyBatch = new ArrayList<>();
        for (int n = 0; n < busy; n++) {
            busyBatch.add(job("busy", "u" + (n % 4), n));
        }
        publisher.publishAll(TOPIC, busyBatch);
        long before = flow.redisMillis();
        List<Message> quietBatch = new ArrayList<>();
        for (int n = 0; n < burst; n++) {
            quietBatch.add(job("quiet", "q", n));
        }
        publisher.publishAll(TOPIC, quietBatch);
        long after = flow.redisMillis();

        // (busy - burst) / permits = 1.75 s at the rate; the wait only bounds how long a failure takes to show.
        Wait.until("every message handled", Duration.ofSeconds(20), () -> calls.size() >= busy + burst);
        assertThat(calls).as("each once").hasSize(busy + burst);
        List<Long> busyTimes = calls.stream().filter(c -> c.flowKey().equals("busy")).map(Call::admittedAt).sorted()
                .toList();
        for (int i = 0; i + permits + burst < busyTimes.size(); i++) {
            assertThat(busyTimes.get(i + permits + burst) - busyTimes.get(i))
                    .as("%d entries of one key let in within a second, from the %dth", permits + burst + 1, i)
                    .isGreaterThanOrEqualTo(1000);
        }
        long span = busyTimes.get(busyTimes.size() - 1) - busyTimes.get(0);
        assertThat(span).as("first to last let in, ms").isGreaterThanOrEqualTo((busy - burst) * 1000L / permits - 2);
        assertThat(calls.stream().filter(c -> c.flowKey().equals("quiet")).map(Call::admittedAt))
                .as("the quiet key's entries let in as they were published, past the busy key's waiting ones")
                .hasSize(burst).allSatisfy(t -> assertThat(t).isBetween(before, after));
        Map<String, List<Integer>> perKey = new ConcurrentHashMap<>();
        calls.forEach(c -> perKey.computeIfAbsent(c.key(), k -> new ArrayList<>()).add(c.n()));
        perKey.forEach((key, ns) -> assertThat(ns).as("message key %s in publish order", key).isSorted());
        assertThat(perKey).hasSize(5);
        Wait.until("nothing left waiting, and no hold", Duration.ofSeconds(10), () -> flow.members("queue",
                PARTITIONS) == 0 && flow.members("later", PARTITIONS) == 0);
        assertThat(flow.members("holds", PARTITIONS)).as("holds of an ordered group").isZero();
        System.out.printf("ordered flow rate %d/s, burst %d (%s): %d entries of one key let in over %d ms%n", permits,
                burst, deployment, busy, span);
    }

}
