package dev.runbus;

import static dev.runbus.testing.FlowJobs.body;
import static dev.runbus.testing.FlowJobs.job;
import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The confirm of a read's flow slots is not awaited by the read loop: while one partition's confirm is unanswered
 * (its master stalls), the loop goes on reading and the runners go on running what has no flow key or another
 * partition (rule 14). Before, the read loop waited for the answer up to the command timeout, and read nothing
 * meanwhile. On the local Redis, behind a proxy that holds the replies of the bus's command connection from the
 * confirm on (the call runs; its answer comes late); the read loop reads on a connection of its own.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FlowConfirmUnansweredTest {

    private static final String TOPIC = "jobs";
    private final String prefix = "test-flow-confirm-" + UUID.randomUUID();
    private final TcpProxy proxy = TcpProxy.before(RedisTarget.local().uri());
    private final List<Bus> buses = new ArrayList<>();

    @AfterEach
    void tearDown() {
        proxy.releaseReplies(); // lets the bus close: its calls are answered
        buses.forEach(Bus::close);
        proxy.close();
        RedisTarget.local().deleteKeys(prefix);
    }

    private Bus connect(BusConfig.Builder config) {
        Bus b = Bus.connect(config.keyPrefix(prefix).build());
        buses.add(b);
        return b;
    }

    @Test
    void whileAConfirmIsUnanswered_theReadLoopReadsOn_andEntriesWithoutAFlowKeyRun() {
        Bus direct = connect(BusConfig.builder(RedisTarget.local().uri()));
        proxy.holdRepliesFrom(c -> c.get(0).equals("FCALL") && c.get(1).endsWith("_flow") && c.contains("confirm"));
        Bus bus = connect(BusConfig.builder(proxy.uri()).scriptMode(ScriptMode.FUNCTIONS)
                .commandTimeout(Duration.ofMinutes(10)));
        List<String> handled = new CopyOnWriteArrayList<>();
        bus.subscribe(TOPIC, "g", "c1", d -> handled.add(body(d)), SubscribeOptions.builder().flowCap(1)
                .concurrency(2).blockTime(Duration.ofMillis(200)).build());

        direct.publisher().publish(TOPIC, job("tenant", 0)); // admitted at once: its key holds nothing
        Wait.until("the flow entry's confirm sent (its reply held)", Duration.ofSeconds(30),
                () -> proxy.matchedCommands() == 1);
        for (int i = 0; i < 5; i++) {
            direct.publisher().publish(TOPIC, Message.of("job", ("plain-" + i).getBytes(StandardCharsets.UTF_8)));
        }

        // The confirm's reply is held for good: before, the read loop waited for it up to the command timeout (here
        // 10 minutes, longer than any wait of this test).
        Wait.until("the five entries without a flow key handled while the confirm is unanswered",
                Duration.ofSeconds(30), () -> handled.size() >= 5);
        assertThat(handled).as("handled while the confirm is unanswered")
                .containsExactlyInAnyOrder("plain-0", "plain-1", "plain-2", "plain-3", "plain-4");

        proxy.releaseReplies();
        Wait.until("the flow entry handled once its confirm is answered", Duration.ofSeconds(30),
                () -> handled.contains("tenant-0"));
        assertThat(handled).as("every entry once").hasSize(6);
    }
}
