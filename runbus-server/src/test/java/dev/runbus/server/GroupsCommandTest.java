package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code runbus groups delete} and the retention figures of {@code runbus stats} and /metrics, on the local
 * Redis: a group nobody reads holds retention back until it is deleted; a group with live consumers is only
 * deleted with --force.
 */
class GroupsCommandTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private final RedisTarget redis = RedisTarget.local();
    private final String prefix = "test-groups-cli-" + UUID.randomUUID().toString().substring(0, 8);
    private final String[] at = {"--redis-url", redis.uri(), "--key-prefix", prefix, "--topic", "jobs"};

    @AfterEach
    void tearDown() {
        redis.deleteKeys(prefix);
    }

    private Cli cli(String... args) {
        return Cli.runWith(at, args);
    }

    private JsonNode json(Cli c) throws Exception {
        assertThat(c.exitCode).as(c.err).isZero();
        return Json.MAPPER.readTree(c.out);
    }

    @Test
    void deletingTheGroupThatHoldsRetentionBackLetsRetentionTrim() throws Exception {
        Metrics metrics = new Metrics();
        AtomicInteger handled = new AtomicInteger();
        String stream = prefix + ":{jobs}:stream";
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).meterRegistry(metrics.registry())
                .retentionAge(Duration.ZERO).retentionInterval(Duration.ofMillis(50)).build())) {
            bus.subscribe("jobs", "workers", "w1", d -> handled.incrementAndGet(),
                    SubscribeOptions.builder().blockTime(Duration.ofMillis(100)).build());
            redis.redis().xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "audit", XGroupCreateArgs.Builder.mkstream(true));
            for (int i = 0; i < 20; i++) {
                bus.publisher().publish("jobs", Message.of("job", Integer.toString(i).getBytes(StandardCharsets.UTF_8)));
            }
            Wait.until("20 handled", WAIT, () -> handled.get() == 20);

            JsonNode held = json(cli("stats", "--json")).at("/streams/jobs/retention/0");
            assertThat(held.get("held_by").asText()).isEqualTo("audit");
            assertThat(held.get("needed_from").asText()).isEqualTo("0-1");
            assertThat(held.get("length").asLong()).isEqualTo(20);
            assertThat(cli("stats").out).contains("retention").contains("held by audit");

            Cli live = cli("groups", "delete", "jobs", "workers");
            assertThat(live.exitCode).isEqualTo(2);
            assertThat(live.err).contains("live consumers").contains("w1").contains("--force");
            Cli none = cli("groups", "delete", "jobs", "nope");
            assertThat(none.exitCode).isEqualTo(2);
            assertThat(none.err).contains("no group nope on topic jobs");

            JsonNode deleted = json(cli("groups", "delete", "jobs", "audit", "--json"));
            assertThat(deleted.get("deleted_group").asText()).isEqualTo("audit");
            Wait.until("the stream trimmed once audit is gone", WAIT, () -> redis.redis().xlen(stream) == 0);

            JsonNode after = json(cli("stats", "--json")).at("/streams/jobs");
            assertThat(after.at("/retention/0/held_by").asText()).isEqualTo("workers");
            assertThat(after.at("/groups").has("audit")).isFalse();
            // The listener hears of a trim just after Redis made it.
            String text = Wait.until("the trim counted", WAIT, metrics::scrape,
                    t -> t.contains("runbus_retention_trimmed_total{topic=\"jobs\"} 20.0"));
            assertThat(text).contains("# TYPE runbus_retention_trimmed_total counter")
                    .contains("runbus_dead_letters_trimmed_total{topic=\"jobs\"} 0.0");
        }
    }

    @Test
    void aGroupWithLiveConsumersIsDeletedOnlyWithForce() throws Exception {
        String stream = prefix + ":{jobs}:stream";
        redis.redis().xadd(stream, "type", "job", "payload", "x");
        redis.redis().xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "zombie", XGroupCreateArgs.Builder.mkstream(true));
        redis.redis().xreadgroup(Consumer.from("zombie", "z1"), XReadArgs.StreamOffset.lastConsumed(stream));

        Cli refused = cli("groups", "delete", "jobs", "zombie");
        assertThat(refused.exitCode).isEqualTo(2);
        assertThat(refused.err).contains("z1");

        JsonNode forced = json(cli("groups", "delete", "jobs", "zombie", "--force", "--json"));
        assertThat(forced.get("pending_dropped").asLong()).isEqualTo(1);
        assertThat(forced.get("live_consumers").toString()).contains("z1");
        assertThat(redis.redis().xinfoGroups(stream)).isEmpty();
    }

    @Test
    void usage() {
        Cli help = Cli.run("groups", "delete", "--help");
        assertThat(help.exitCode).isZero();
        assertThat(help.out).contains("TOPIC").contains("GROUP").contains("--force").contains("--redis-url");
        Cli missing = Cli.run("groups", "delete", "jobs", "--redis-url", "redis://127.0.0.1:1");
        assertThat(missing.exitCode).isEqualTo(2);
        assertThat(missing.err).contains("GROUP");
        assertThat(Cli.run("groups").exitCode).isEqualTo(2);
    }
}
