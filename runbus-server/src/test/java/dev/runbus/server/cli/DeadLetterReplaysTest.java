package dev.runbus.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.DeadLetter;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What {@code dlq replay --all} walks: the dead letters there were when it started, and no dead letter made while it
 * runs (a replayed message that fails again at once would otherwise be replayed again by the same command, and again);
 * and the order of dead-letter ids within a partition.
 */
class DeadLetterReplaysTest {

    private final RedisTarget redis = RedisTarget.local();
    private final String prefix = "dl-replays-" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void tearDown() {
        redis.deleteKeys(prefix);
    }

    @Test
    void aDeadLetterMadeDuringTheReplayIsLeftForTheNextCommand() {
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).build())) {
            try (Subscription sub = bus.subscribe("jobs", "workers", "w1", d -> {
                throw new IllegalStateException("poison");
            }, SubscribeOptions.builder().maxDeliveries(1).blockTime(Duration.ofMillis(100)).build())) {
                for (int i = 0; i < 3; i++) {
                    bus.publisher().publish("jobs", Message.builder("job", "p".getBytes(StandardCharsets.UTF_8))
                            .id("m-" + i).build());
                }
                Wait.until("three dead letters", Duration.ofSeconds(20), () -> bus.deadLetters().count("jobs") == 3);
            }
            String deadStream = prefix + ":{jobs}:dead";
            StringWriter progress = new StringWriter();
            DeadLetterReplays replays = new DeadLetterReplays(bus.deadLetters(), "jobs", null,
                    new PrintWriter(progress, true));
            DeadLetterReplays.Plan plan = replays.plan();
            assertThat(plan.toReplay()).isEqualTo(3);

            DeadLetterReplays.Result r = replays.replay(plan, d -> {
                String id = bus.deadLetters().replay("jobs", d.id());
                // As if the replayed message died again at once: a new dead letter, after the walk's end.
                List<StreamMessage<String, String>> entry = redis.redis().xrange(deadStream,
                        Range.create(d.id(), d.id()));
                redis.redis().xadd(deadStream, entry.get(0).getBody());
                return id;
            });

            assertThat(r.replayed()).isEqualTo(3);
            List<DeadLetter> all = bus.deadLetters().list("jobs", null, 10);
            assertThat(all).hasSize(6);
            assertThat(all.subList(0, 3)).allMatch(d -> d.replayedAs().isPresent());
            assertThat(all.subList(3, 6)).allMatch(d -> d.replayedAs().isEmpty());
            assertThat(progress.toString()).contains("3 dead letters of topic jobs to replay (of 3: 0 replayed before)")
                    .contains("replayed 3 of 3");
        }
    }

    @Test
    void idsOfOnePartitionCompareAsNumbers() {
        assertThat(DeadLetterReplays.compareIds("999-5", "1000-0")).isNegative();
        assertThat(DeadLetterReplays.compareIds("1000-10", "1000-9")).isPositive();
        assertThat(DeadLetterReplays.compareIds("1700000000000-0@3", "1700000000000-0@3")).isZero();
        assertThat(DeadLetterReplays.compareIds("18446744073709551615-0@1", "1-0@1")).isPositive();
    }
}
