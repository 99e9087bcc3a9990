package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Partitioner;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import io.lettuce.core.Range;
import io.lettuce.core.XAddArgs;
import java.util.LinkedHashMap;
import java.util.Map;
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
        String streamA = prefix + ":{" + new dev.runbus.internal.redis.Partitions("runs", PARTITIONS)
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

    /**
     * Issue 20, item 9: the sweeper kept one dead-letter checkpoint over the partitions' merged listing, ordered
     * by time. A dead letter added afterwards to a partition whose master's clock is behind has a smaller id than
     * that checkpoint, so no sweep read it: its run, found not live, was republished (and would execute again)
     * instead of failed. With a checkpoint per partition it is failed, and not republished.
     */
    @Test
    void deadLetterAddedBehindAnotherPartitionsCheckpoint_failsItsRunInsteadOfItBeingRepublished() {
        Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).partitions("runs", PARTITIONS).build());
        closeables.add(bus);
        Runs runs = runs(bus, configBuilder(schema, "w1", workerOptions().build()).ordered(true).build());
        String userA = "user-a";
        String userB = "user-b";
        while (Partitioner.partitionOf(userB, PARTITIONS) == Partitioner.partitionOf(userA, PARTITIONS)) {
            userB = userB + "b";
        }
        int partitionA = Partitioner.partitionOf(userA, PARTITIONS);
        int partitionB = Partitioner.partitionOf(userB, PARTITIONS);
        UUID a = runs.submit(NewRun.of("s", userA, "a")).runId();
        UUID b = runs.submit(NewRun.of("s", userB, "b")).runId();
        // No worker runs: each run is made running on its trigger, as an attempt that then failed for good.
        String entryA = running(a, partitionA);
        String entryB = running(b, partitionB);
        deadLetter(partitionA, "*", entryA); // by partition A's clock: now

        SweepResult first = runs.sweepOnce();

        assertThat(first.deadLettersReconciled()).isEqualTo(1);
        assertThat(runs.get(a).orElseThrow().status()).isEqualTo(RunStatus.FAILED);
        // Then B's attempt is dead-lettered on a master whose clock is behind A's: an id before A's dead letter's.
        deadLetter(partitionB, "1-1", entryB);
        age(b);

        SweepResult second = runs.sweepOnce();

        assertThat(second.deadLettersReconciled()).isEqualTo(1);
        assertThat(second.republished()).isZero();
        Run failed = runs.get(b).orElseThrow();
        assertThat(failed.status()).isEqualTo(RunStatus.FAILED);
        assertThat(failed.deadLetterId()).contains("1-1@" + partitionB);
        assertThat(republishedOf(b)).isZero();
        assertThat(runs.sweepOnce().deadLettersReconciled()).isZero(); // each partition's checkpoint moved on
    }

    /**
     * The single checkpoint of before may have passed over dead letters: on a partitioned topic it is no longer
     * read, and every partition is read from its start once, which reconciles what it passed over.
     */
    @Test
    void theSingleCheckpointOfBefore_isNotReadOnAPartitionedTopic_andWhatItPassedOverIsReconciled() {
        Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).partitions("runs", PARTITIONS).build());
        closeables.add(bus);
        Runs runs = runs(bus, configBuilder(schema, "w1", workerOptions().build()).ordered(true).build());
        UUID a = runs.submit(NewRun.of("s", "user-a", "a")).runId();
        int partition = Partitioner.partitionOf("user-a", PARTITIONS);
        deadLetter(partition, "*", running(a, partition));
        String legacy = "dead_letters_after:runs:" + RunsConfig.DEFAULT_GROUP;
        // Past a's dead letter by time, as a dead letter of a partition with a faster clock would have put it.
        execute("INSERT INTO " + schema + ".sweeper_state (name, value) VALUES ('" + legacy + "', '"
                + (System.currentTimeMillis() + 3_600_000) + "-0@0')");

        assertThat(runs.sweepOnce().deadLettersReconciled()).isEqualTo(1);

        assertThat(runs.get(a).orElseThrow().status()).isEqualTo(RunStatus.FAILED);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".sweeper_state WHERE name = '" + legacy
                + "@" + partition + "'")).isEqualTo(1);
    }

    private String partitionName(int p) {
        return new dev.runbus.internal.redis.Partitions("runs", PARTITIONS).name(p);
    }

    /** Makes the run running on its trigger, the one entry of its partition; returns that entry's plain id. */
    private String running(UUID run, int partition) {
        var entries = redis.redis().xrange(prefix + ":{" + partitionName(partition) + "}:stream", Range.create("-", "+"));
        assertThat(entries).hasSize(1);
        String entry = entries.get(0).getId();
        execute("UPDATE " + schema + ".runs SET status = 'running', attempts = 1, stream_id = '" + entry + "@"
                + partition + "' WHERE id = '" + run + "'");
        return entry;
    }

    /** What {@code dead_letter.lua} writes for the entry, in the partition's dead-letter stream under {@code id}. */
    private void deadLetter(int partition, String id, String entry) {
        String name = partitionName(partition);
        var original = redis.redis().xrange(prefix + ":{" + name + "}:stream", Range.create(entry, entry)).get(0)
                .getBody();
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("dl:topic", "runs");
        fields.put("dl:stream_id", entry);
        fields.put("dl:group", "run-workers");
        fields.put("dl:consumer", "w1");
        fields.put("dl:deliveries", "3");
        fields.put("dl:reason", "poison");
        fields.put("dl:at", String.valueOf(System.currentTimeMillis()));
        fields.putAll(original);
        redis.redis().xadd(prefix + ":{" + name + "}:dead", id.equals("*") ? new XAddArgs() : new XAddArgs().id(id),
                fields);
    }
}
