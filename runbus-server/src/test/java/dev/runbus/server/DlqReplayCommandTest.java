package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.DeadLetter;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code runbus dlq replay} needs PostgreSQL only for a run's dead letter: a plain topic's dead letter is replayed
 * with {@code --redis-url} alone, and a run's trigger without {@code --database-url} is refused by name, with
 * nothing replayed (the run would stay failed in PostgreSQL while its trigger ran again).
 */
class DlqReplayCommandTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private final RedisTarget redis = RedisTarget.local();
    private final String prefix = "dlq-replay-" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void tearDown() {
        redis.deleteKeys(prefix);
    }

    @Test
    void aPlainDeadLetterIsReplayedWithoutADatabase_aRunsTriggerIsRefusedByName() {
        List<String> seen = new CopyOnWriteArrayList<>();
        UUID runId = UUID.randomUUID();
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).build())) {
            bus.publisher().publish("jobs", Message.builder("job", "p".getBytes(StandardCharsets.UTF_8)).id("plain-1")
                    .build());
            bus.publisher().publish("jobs", Message.builder("runbus.run",
                    runId.toString().getBytes(StandardCharsets.UTF_8)).id(runId.toString()).build());
            try (var sub = bus.subscribe("jobs", "workers", "w1", d -> {
                seen.add(d.message().id());
                if (seen.size() <= 2) {
                    throw new IllegalStateException("fails the first time");
                }
            }, SubscribeOptions.builder().maxDeliveries(1).blockTime(Duration.ofMillis(200)).build())) {
                Wait.until("both dead-lettered", WAIT, () -> bus.deadLetters().count("jobs") == 2);
                List<DeadLetter> dead = bus.deadLetters().list("jobs", null, 10);
                String plain = idOf(dead, "plain-1");
                String trigger = idOf(dead, runId.toString());
                String[] at = {"--redis-url", redis.uri(), "--key-prefix", prefix, "--topic", "jobs"};

                Cli refused = Cli.run(concat(new String[] {"dlq", "replay", trigger}, at));
                assertThat(refused.exitCode).isEqualTo(2);
                assertThat(refused.err).contains("dead letter " + trigger + " is the trigger of run " + runId)
                        .contains("--database-url");
                assertThat(bus.deadLetters().get("jobs", trigger).orElseThrow().replayedAs()).isEmpty();

                Cli replayed = Cli.run(concat(new String[] {"dlq", "replay", plain}, at));
                assertThat(replayed.exitCode).as(replayed.err).isZero();
                Wait.until("the plain message handled again", WAIT, () -> seen.size() == 3);
                assertThat(seen).containsExactlyInAnyOrder("plain-1", runId.toString(), "plain-1");
                assertThat(bus.deadLetters().get("jobs", plain).orElseThrow().replayedAs()).isPresent();
            }
        }
    }

    private static String idOf(List<DeadLetter> dead, String messageId) {
        return dead.stream().filter(d -> d.message().id().equals(messageId)).findFirst().orElseThrow().id();
    }

    private static String[] concat(String[] a, String[] b) {
        String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
