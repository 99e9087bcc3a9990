package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.Keys;
import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.RedisSentinelProcess;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A bus on Sentinel whose master is made a replica without its clients being disconnected (an operator's
 * {@code REPLICAOF}, or a connection that reached the old master after the Sentinels' reconfiguration killed its
 * clients): every write there is answered {@code READONLY}. The bus must ask the Sentinels again instead of staying
 * on the replica.
 */
class SentinelDemotedMasterTest {

    /** The Sentinels' failover takes 1-3 s here; then each connection's next write finds the new master. */
    private static final Duration BOUND = Duration.ofSeconds(20);

    private RedisSentinelProcess sentinel;
    private Bus bus;

    @BeforeEach
    void start() {
        sentinel = RedisSentinelProcess.start();
    }

    @AfterEach
    void stop() {
        if (bus != null) {
            bus.close();
        }
        sentinel.close();
    }

    @Test
    void aConnectionLeftOnADemotedMasterAsksTheSentinelsAgainAndPublishesResumeOnTheNewMaster() {
        String prefix = "test-demoted-" + UUID.randomUUID();
        String topic = "t";
        List<String> handled = new CopyOnWriteArrayList<>();
        bus = Bus.connect(BusConfig.builder("redis-sentinel://" + sentinel.sentinelAddresses() + "#"
                + RedisSentinelProcess.MASTER_NAME).keyPrefix(prefix).commandTimeout(Duration.ofSeconds(2)).build());
        bus.subscribe(topic, "g", "c", d -> handled.add(new String(d.message().payload(), StandardCharsets.UTF_8)),
                SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build());
        bus.publisher().publish(topic, Message.of("t", "before".getBytes(StandardCharsets.UTF_8)));
        Wait.until("the first message handled", BOUND, () -> handled.contains("before"));
        String stream = new Keys(prefix).stream(topic);
        Wait.until("its ack applied on the master", BOUND, () -> RedisClusterProcess.call(sentinel.master(),
                r -> r.xpending(stream, "g").getCount()) == 0);

        // The replica made master and the master its replica by hand: nobody kills the bus's connections.
        int newMaster = sentinel.replica().port();
        RedisClusterProcess.call(sentinel.replica(), r -> r.replicaofNoOne());
        RedisClusterProcess.call(sentinel.master(), r -> r.replicaof("127.0.0.1", newMaster));
        Wait.until("the old master a replica", BOUND, () -> RedisClusterProcess.call(sentinel.master(),
                r -> r.info("replication")).contains("role:slave"));
        // ... and the Sentinels told to fail over, which they do to the replica (already master) without
        // reconfiguring the old master, which already replicates it.
        RedisSentinelProcess.sentinel(sentinel.sentinels().get(0), c -> c.sync().failover(
                RedisSentinelProcess.MASTER_NAME));

        long demotedAt = System.nanoTime();
        List<String> refusals = new CopyOnWriteArrayList<>();
        String id = Wait.until("a publish accepted", BOUND, () -> {
            try {
                return bus.publisher().publish(topic, Message.of("t", "after".getBytes(StandardCharsets.UTF_8)));
            } catch (RunbusException e) {
                refusals.add(String.valueOf(e.getMessage()));
                return null;
            }
        }, r -> r != null);
        long resumedMillis = (System.nanoTime() - demotedAt) / 1_000_000;
        System.out.printf("sentinel demotion: publishes resumed after %d ms, %d refused (%s)%n", resumedMillis,
                refusals.size(), refusals.stream().distinct().toList());

        assertThat(sentinel.currentMasterPort()).isEqualTo(newMaster);
        List<String> onNewMaster = RedisClusterProcess.call(sentinel.replica(), r -> r.xrange(stream,
                io.lettuce.core.Range.create("-", "+"))).stream().map(m -> m.getId()).toList();
        assertThat(onNewMaster).as("the publish landed on the new master").contains(id);
        Wait.until("the message published after the demotion handled", BOUND, () -> handled.contains("after"));
        assertThat(handled).containsExactly("before", "after");
    }
}
