package dev.runbus;

import static dev.runbus.testkit.Deployment.CLUSTER;
import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;

/**
 * Rebalancing an ordered group of 16 partitions from 1 to 4 to 2 consumers: after each change every partition
 * is owned and every consumer owns ⌈16/n⌉ or ⌊16/n⌋ of them, within the documented bound (about two renewal
 * ticks plus the entry running; here the lease is 3 s and a tick 1 s). The settle times are printed.
 */
@OnDeployments({LOCAL, REDIS_62, CLUSTER})
class RebalanceTest {

    private static final int PARTITIONS = 16;
    private final String prefix = "test-rebalance-" + UUID.randomUUID();
    private final List<Bus> buses = new ArrayList<>();

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    @AfterEach
    void tearDown() {
        buses.forEach(Bus::close);
        target().deleteKeys(prefix);
    }

    private Subscription consumer(String name) {
        Bus bus = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix)
                .partitions("orders", PARTITIONS).build());
        buses.add(bus);
        return bus.subscribe("orders", "g", name, d -> { }, SubscribeOptions.builder().ordered(true)
                .leaseTime(Duration.ofSeconds(3)).minIdle(Duration.ofSeconds(1)).build());
    }

    /** Consumer name → partitions whose lease it holds; null when some partition has no owner. */
    private Map<String, Integer> owners() {
        Map<String, Integer> owners = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            String holder = target().redis().get(new dev.runbus.internal.redis.Keys(prefix).lease(new dev.runbus.internal.redis.Partitions("orders", PARTITIONS).name(p), "g"));
            if (holder == null) {
                return null;
            }
            owners.merge(holder.split(" ")[1], 1, Integer::sum);
        }
        return owners;
    }

    private long settle(String what, int consumers) {
        long start = System.nanoTime();
        int low = PARTITIONS / consumers;
        int high = (PARTITIONS + consumers - 1) / consumers;
        Map<String, Integer> settled = Wait.until(what, Duration.ofSeconds(15), this::owners,
                o -> o != null && o.size() == consumers && o.values().stream().allMatch(n -> n == low || n == high));
        long millis = (System.nanoTime() - start) / 1_000_000;
        System.out.println("rebalance " + what + ": settled in " + millis + " ms: " + settled);
        assertThat(settled.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(PARTITIONS);
        return millis;
    }

    @Test
    void oneToFourToTwoConsumers_ownershipSettlesFairWithinTheBound() {
        Subscription first = consumer("c0");
        settle("start with 1 consumer", 1);
        List<Subscription> joined = new ArrayList<>();
        for (int i = 1; i < 4; i++) {
            joined.add(consumer("c" + i));
        }
        long join = settle("1 -> 4 consumers", 4);
        joined.get(0).close();
        joined.get(1).close();
        long leave = settle("4 -> 2 consumers (graceful close)", 2);
        // Bound: two ticks (2 s) for the others to see the change and take over, plus scheduling slack.
        assertThat(join).isLessThan(5_000);
        assertThat(leave).isLessThan(5_000);
        assertThat(first.topic()).isEqualTo("orders");
    }
}
