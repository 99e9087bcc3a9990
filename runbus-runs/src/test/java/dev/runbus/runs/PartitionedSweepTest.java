package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Partitioner;
import dev.runbus.runs.testing.RunsTestSupport;
import io.lettuce.core.Range;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The sweeper on a runs topic of several partitions: whether a pending run's trigger is still waiting is asked
 * of the partition it is in, never answered by another partition's newer entries.
 */
class PartitionedSweepTest extends RunsTestSupport {

    private static final int PARTITIONS = 4;

    @Test
    void aLostTriggerIsRepublished_thoughAnotherPartitionHoldsNewerUndeliveredTriggers() {
        Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).partitions("runs", PARTITIONS).build());
        closeables.add(bus);
        Runs runs = runs(bus, configBuilder(schema, "w1", workerOptions().build()).ordered(true).build());
        String userA = "user-a";
        String userB = "user-b";
        while (Partitioner.partitionOf(userB, PARTITIONS) == Partitioner.partitionOf(userA, PARTITIONS)) {
            userB = userB + "b";
        }
        UUID a = runs.submit(NewRun.of("s", userA, "a")).runId();
        UUID b = runs.submit(NewRun.of("s", userB, "b")).runId();
        // No worker runs: both triggers wait undelivered. Then Redis loses a's trigger.
        String streamA = prefix + ":{" + new dev.runbus.internal.Partitions("runs", PARTITIONS)
                .name(Partitioner.partitionOf(userA, PARTITIONS)) + "}:stream";
        var entries = redis.redis().xrange(streamA, Range.create("-", "+"));
        assertThat(entries).hasSize(1);
        redis.redis().xdel(streamA, entries.get(0).getId());
        age(a);
        age(b);

        SweepResult sweep = runs.sweepOnce();

        assertThat(sweep.republished()).isEqualTo(1);
        assertThat(republishedOf(a)).isEqualTo(1);
        assertThat(republishedOf(b)).isZero();
        assertThat(redis.redis().xlen(streamA)).isEqualTo(1); // a's new trigger, in its user's partition
    }
}
