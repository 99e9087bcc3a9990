package dev.runbus;

import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testing.OrderedChild;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;

/**
 * Per-key order under faults, with ordered consumers in child JVMs: one SIGKILLed mid-load, one SIGSTOPped past
 * its lease and resumed, one joining and one leaving (SIGTERM, a graceful close) while keyed messages flow.
 * Each handler's effect is a record in a store that honours fencing tokens ({@link OrderedChild}). The
 * properties: every entry is handled (nothing lost, every PEL empty); per key, the records never go back (a
 * repeat is the entry that was cut off, never an older one after a newer one ran); per partition, tokens never
 * go back; and the store refused writes only of the paused consumer, at most one per partition (a handler that
 * was running when the pause began and writes after it resumed), never of another. So two owners never ran
 * one partition at once, except that one in-flight handler, and its effect was fenced off.
 */
@OnDeployments({LOCAL, REDIS_62})
// Child JVMs started one after another, each awaited with ChildJvm's patience: past the suite's 3 minutes on a
// machine running much else (once at a load average of 37). The deadline only bounds how long a failure takes to show.
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class OrderedFaultsTest {

    private static final int PARTITIONS = 8;
    private static final int KEYS = 20;
    private static final int PER_KEY = 60;
    private static final long LEASE_MILLIS = 1500;

    private final List<ChildJvm> children = new ArrayList<>();
    private final String prefix = "test-ordered-faults-" + UUID.randomUUID();
    private final String topic = "orders";
    private final String logKey = prefix + ":log";

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (ChildJvm c : children) {
            try {
                c.resume(); // a stopped process is not killed until it runs again
            } finally {
                c.kill();
            }
        }
        target().deleteKeys(prefix);
    }

    private ChildJvm consumer(String name) throws Exception {
        ChildJvm c = ChildJvm.start(OrderedChild.class, target().uri(), prefix, topic, Integer.toString(PARTITIONS),
                name, Long.toString(LEASE_MILLIS), logKey);
        children.add(c);
        c.awaitLine("READY", Duration.ofSeconds(30));
        return c;
    }

    @Test
    void orderHoldsAndNothingIsLostThroughKillsPausesJoinsAndLeaves() throws Exception {
        ChildJvm c1 = consumer("c1");
        ChildJvm c2 = consumer("c2");
        ChildJvm c3 = consumer("c3");
        try (Bus producer = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix)
                .partitions(topic, PARTITIONS).build())) {
            Publisher pub = producer.publisher();
            for (int n = 1; n <= PER_KEY; n++) {
                List<Message> round = new ArrayList<>();
                for (int k = 0; k < KEYS; k++) {
                    round.add(Message.builder("seq", ("k" + k + ":" + n).getBytes(StandardCharsets.UTF_8))
                            .key("k" + k).build());
                }
                pub.publishAll(topic, round);
                if (n == 10) {
                    c1.kill(); // mid-handler, most likely: nothing acked, its leases run out
                    consumer("c4");
                }
                if (n == 25) {
                    c2.pause(); // past its lease: its partitions go to others while it is stopped
                }
                if (n == 45) {
                    c2.resume();
                }
                if (n == 50) {
                    c3.terminate(Duration.ofSeconds(15)); // a graceful close hands its partitions over at once
                }
                Thread.sleep(100); // pacing the producer, so that the faults land while work flows
            }
        }
        Wait.until("every entry handled and acked", Duration.ofSeconds(60), this::allAcked);
        List<String> log = target().redis().lrange(logKey, 0, -1);
        Map<String, List<Integer>> byKey = new HashMap<>();
        Map<Integer, List<Long>> tokens = new HashMap<>();
        Set<String> handled = new HashSet<>();
        for (String line : log) {
            String[] f = line.split(" ");
            byKey.computeIfAbsent(f[2], k -> new ArrayList<>()).add(Integer.parseInt(f[3]));
            tokens.computeIfAbsent(Integer.parseInt(f[1]), p -> new ArrayList<>()).add(Long.parseLong(f[4]));
            handled.add(f[2] + ":" + f[3]);
        }
        assertThat(handled).hasSize(KEYS * PER_KEY);
        byKey.forEach((key, seqs) -> assertThat(seqs).as("starts of " + key + ": "
                + log.stream().filter(l -> l.split(" ")[2].equals(key)).toList()).isSorted());
        tokens.forEach((p, t) -> assertThat(t).as("fencing tokens of partition " + p).isSorted());
        List<String> refused = target().redis().lrange(logKey + ":refused", 0, -1);
        assertThat(refused).as("refused writes").allSatisfy(r -> assertThat(r).startsWith("c2 "));
        assertThat(refused.stream().map(r -> r.split(" ")[1]).distinct().count()).isEqualTo(refused.size());
        int repeats = log.size() - KEYS * PER_KEY;
        System.out.println("ordered faults: " + log.size() + " handler records for " + KEYS * PER_KEY
                + " entries (" + repeats + " repeats of entries cut off), " + refused.size() + " stale writes of the"
                + " paused consumer refused by token, tokens per partition up to "
                + tokens.values().stream().mapToLong(t -> t.get(t.size() - 1)).max().orElse(0));
    }

    private boolean allAcked() {
        for (int p = 0; p < PARTITIONS; p++) {
            String stream = prefix + ":{" + new dev.runbus.internal.redis.Partitions(topic, PARTITIONS).name(p) + "}:stream";
            if (target().redis().xpending(stream, "g").getCount() > 0) {
                return false;
            }
            var groups = target().redis().xinfoGroups(stream);
            // every entry delivered: the group's last-delivered id is the stream's last id
            String last = target().redis().xrevrange(stream, io.lettuce.core.Range.create("-", "+"),
                    io.lettuce.core.Limit.from(1)).get(0).getId();
            boolean delivered = groups.stream().anyMatch(g -> String.valueOf(g).contains(last));
            if (!delivered) {
                return false;
            }
        }
        return true;
    }
}
