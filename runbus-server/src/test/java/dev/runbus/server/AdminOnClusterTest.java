package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The admin commands on a Redis Cluster of 3 masters, through {@code redis-cluster://}: a topic of 6 partitions
 * (two on each master) with a group, pending entries and dead letters is listed, inspected and cleaned up the
 * way it is on one server.
 */
class AdminOnClusterTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private final RedisTarget cluster = RedisTarget.cluster();
    private final String prefix = "admin-cluster-" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void tearDown() {
        cluster.deleteKeys(prefix);
    }

    @Test
    void statsPartitionsPendingDeadLettersAndConsumers() throws Exception {
        AtomicInteger handled = new AtomicInteger();
        try (Bus bus = Bus.connect(BusConfig.builder(cluster.uri()).keyPrefix(prefix).partitions("jobs", 6).build())) {
            for (int i = 0; i < 60; i++) {
                bus.publisher().publish("jobs", "user-" + (i % 12), Message.of(i % 20 == 0 ? "poison" : "job",
                        Integer.toString(i).getBytes(StandardCharsets.UTF_8)));
            }
            bus.subscribe("jobs", "workers", "w1", d -> {
                if (d.message().type().equals("poison")) {
                    throw new IllegalStateException("poison");
                }
                handled.incrementAndGet();
            }, SubscribeOptions.builder().maxDeliveries(1).blockTime(Duration.ofMillis(200)).build());
            Wait.until("57 handled, 3 dead-lettered", WAIT, () -> handled.get() == 57
                    && bus.deadLetters().count("jobs") == 3);
        }
        String[] at = {"--redis-url", cluster.uri(), "--key-prefix", prefix, "--topic", "jobs", "--group", "workers"};

        JsonNode stats = json(cli("stats", at));
        assertThat(stats.at("/streams/jobs/length").asLong()).isEqualTo(60);
        assertThat(stats.at("/streams/jobs/dead_letters").asLong()).isEqualTo(3);
        assertThat(stats.at("/streams/jobs/groups/workers/pending").asLong()).isZero();

        JsonNode partitions = json(cli("partitions", concat(new String[] {"jobs"}, at)));
        assertThat(partitions.toString()).contains("\"partition\":5");
        long entries = 0;
        for (JsonNode p : partitions.findValues("length")) {
            entries += p.asLong();
        }
        assertThat(entries).isEqualTo(60);

        JsonNode deadLetters = json(cli("dlq", concat(new String[] {"list"}, at)));
        assertThat(deadLetters.toString()).contains("poison");
        assertThat(json(cli("pending", at)).toString()).doesNotContain("\"consumer\"");
        assertThat(json(cli("consumers", concat(new String[] {"list"}, at))).toString()).contains("w1");

        Cli purge = Cli.run(concat(new String[] {"dlq", "purge", "--all"}, at));
        assertThat(purge.exitCode).as(purge.err).isZero();
        assertThat(json(cli("stats", at)).at("/streams/jobs/dead_letters").asLong()).isZero();
    }

    private static String cli(String command, String... args) {
        Cli c = Cli.run(concat(new String[] {command}, concat(args, new String[] {"--json"})));
        assertThat(c.exitCode).as(command + ": " + c.err).isZero();
        return c.out;
    }

    private static JsonNode json(String out) throws Exception {
        return Json.MAPPER.readTree(out);
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = new String[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
