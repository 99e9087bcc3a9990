package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code runbus flow show|cap|rate|weight|topic-cap|topic-rate} on the local Redis: what waits and what holds a slot, one key's
 * cap, rate and weight and the topic's cap changed live, against subscriptions whose handlers block.
 */
class FlowCommandTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private final RedisTarget redis = RedisTarget.local();
    private final String prefix = "test-flow-cli-" + UUID.randomUUID().toString().substring(0, 8);
    private final String[] at = {"--redis-url", redis.uri(), "--key-prefix", prefix};

    @AfterEach
    void tearDown() {
        redis.deleteKeys(prefix);
    }

    private Cli cli(String... args) {
        return Cli.runWith(at, args);
    }

    private JsonNode json(String... args) throws Exception {
        Cli c = cli(args);
        assertThat(c.exitCode).as(c.err).isZero();
        return Json.MAPPER.readTree(c.out);
    }

    private static Message job(String key, int n) {
        return Message.builder("job", (key + "-" + n).getBytes(java.nio.charset.StandardCharsets.UTF_8)).flowKey(key)
                .build();
    }

    @Test
    void showsWhatWaitsAndWhatHolds_andChangesOneKeysCapAndRateLive() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<String> handled = new CopyOnWriteArrayList<>();
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).build())) {
            bus.subscribe("jobs", "g", "c", d -> {
                String body = new String(d.message().payload(), java.nio.charset.StandardCharsets.UTF_8);
                if (body.equals("k-0")) {
                    release.await();
                }
                handled.add(body);
            }, SubscribeOptions.builder().flowCap(1).concurrency(4).blockTime(Duration.ofMillis(200)).build());
            for (int n = 0; n < 4; n++) {
                bus.publisher().publish("jobs", job("k", n));
            }

            JsonNode shown = json("flow", "show", "jobs", "--json");
            assertThat(shown.get("waiting").asLong()).as("behind k's one slot").isEqualTo(3);
            assertThat(shown.get("slots_held").asLong()).isEqualTo(1);
            assertThat(shown.get("keys_throttled").asLong()).as("no rate").isZero();
            assertThat(cli("flow", "show", "jobs").out).contains("waiting").contains("slots_held");

            JsonNode rated = json("flow", "rate", "jobs", "k", "1", "--per", "1h", "--json");
            assertThat(rated.get("rate").asText()).isEqualTo("1 per PT1H, burst 1");
            assertThat(rated.get("let_in").asInt()).as("no free slot: nothing let in").isZero();

            JsonNode raised = json("flow", "cap", "jobs", "k", "3", "--json");
            assertThat(raised.get("let_in").asInt()).as("two more slots, but the rate's burst of one").isEqualTo(1);
            Wait.until("the one let in handled", WAIT, () -> handled.size() == 1);
            assertThat(json("flow", "show", "jobs", "--json").get("waiting").asLong()).as("held back by the rate")
                    .isEqualTo(2);

            assertThat(json("flow", "rate", "jobs", "k", "--clear", "--json").get("let_in").asInt())
                    .as("no rate of the group's: both let in").isEqualTo(2);
            Wait.until("three handled", WAIT, () -> handled.size() == 3);
            assertThat(json("flow", "cap", "jobs", "k", "--clear", "--json").get("cap").asText())
                    .isEqualTo("the group's");
            release.countDown();
            Wait.until("all four handled", WAIT, () -> handled.size() == 4);
        }
    }

    @Test
    void changesTheTopicsCapAndAKeysWeightLive() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<String> handled = new CopyOnWriteArrayList<>();
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).build())) {
            bus.subscribe("jobs", "g", "c", d -> {
                release.await();
                handled.add(new String(d.message().payload(), java.nio.charset.StandardCharsets.UTF_8));
            }, SubscribeOptions.builder().flowTopicCap(1).concurrency(4).blockTime(Duration.ofMillis(200)).build());
            for (int n = 0; n < 3; n++) {
                bus.publisher().publish("jobs", job("k" + n, 0));
            }
            assertThat(json("flow", "show", "jobs", "--json").get("waiting").asLong()).as("behind the topic's one slot")
                    .isEqualTo(2);

            JsonNode weighted = json("flow", "weight", "jobs", "k2", "2", "--json");
            assertThat(weighted.get("weight").asDouble()).isEqualTo(2.0);
            assertThat(weighted.get("let_in").asInt()).as("the topic is full").isZero();

            JsonNode raised = json("flow", "topic-cap", "jobs", "2", "--json");
            assertThat(raised.get("topic_cap").asInt()).isEqualTo(2);
            assertThat(raised.get("let_in").asInt()).as("one more slot").isEqualTo(1);
            assertThat(json("flow", "topic-cap", "jobs", "--clear", "--json").get("let_in").asInt())
                    .as("back to the group's 1 with 2 running").isZero();
            assertThat(json("flow", "weight", "jobs", "k2", "--clear", "--json").get("weight").asDouble())
                    .isEqualTo(1.0);
            release.countDown();
            Wait.until("all three handled", WAIT, () -> handled.size() == 3);
        }
        Cli zero = cli("flow", "weight", "jobs", "k", "0");
        assertThat(zero.exitCode).isEqualTo(2);
        assertThat(zero.err).contains("from 1.0E-6");
        Cli neither = cli("flow", "topic-cap", "jobs");
        assertThat(neither.exitCode).isEqualTo(2);
        assertThat(neither.err).contains("one of the two");
    }

    @Test
    void changesTheTopicsRateLive() throws Exception {
        List<String> handled = new CopyOnWriteArrayList<>();
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).build())) {
            bus.subscribe("jobs", "g", "c", d -> handled.add(new String(d.message().payload(),
                    java.nio.charset.StandardCharsets.UTF_8)), SubscribeOptions.builder()
                    .flowTopicRate(dev.runbus.FlowRate.of(1, Duration.ofMinutes(1))).blockTime(Duration.ofMillis(200))
                    .build());
            for (int n = 0; n < 3; n++) {
                bus.publisher().publish("jobs", job("k" + n, 0));
            }
            Wait.until("the burst of one handled", WAIT, () -> handled.size() == 1);
            assertThat(json("flow", "show", "jobs", "--json").get("waiting").asLong()).as("behind the topic's rate")
                    .isEqualTo(2);

            JsonNode raised = json("flow", "topic-rate", "jobs", "10", "--per", "1m", "--burst", "2", "--json");
            assertThat(raised.get("topic_rate").asText()).isEqualTo("10 per PT1M, burst 2");
            assertThat(raised.get("let_in").asInt()).as("afresh: its burst").isEqualTo(2);
            Wait.until("all three handled", WAIT, () -> handled.size() == 3);
            assertThat(json("flow", "topic-rate", "jobs", "--clear", "--json").get("topic_rate").asText())
                    .isEqualTo("the group's");
        }
        Cli neither = cli("flow", "topic-rate", "jobs");
        assertThat(neither.exitCode).isEqualTo(2);
        assertThat(neither.err).contains("one of the two");
    }

    @Test
    void refusesACapAndClearTogether_orNeither_andABadRate() {
        Cli both = cli("flow", "cap", "jobs", "k", "2", "--clear");
        assertThat(both.exitCode).isEqualTo(2);
        assertThat(both.err).contains("one of the two");
        Cli neither = cli("flow", "rate", "jobs", "k");
        assertThat(neither.exitCode).isEqualTo(2);
        assertThat(neither.err).contains("one of the two");
        Cli zero = cli("flow", "rate", "jobs", "k", "0");
        assertThat(zero.exitCode).isEqualTo(2);
        assertThat(zero.err).contains("permits must be 1 or more");
        Cli badPeriod = cli("flow", "rate", "jobs", "k", "5", "--per", "soon");
        assertThat(badPeriod.exitCode).isEqualTo(2);
        assertThat(badPeriod.err).contains("expected a duration like 500ms");
        Cli badKey = cli("flow", "cap", "jobs", "", "1");
        assertThat(badKey.exitCode).isEqualTo(2);
    }
}
