package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.DeadLetter;
import dev.runbus.Inspector;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.XReadArgs;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL restored to an earlier point while Redis keeps its newer state (docs/backup-and-restore.md).
 *
 * <ul>
 *   <li>Triggers of runs whose rows the restore removed — waiting in the stream, pending under a consumer that died,
 *       scheduled in the delay set — are acknowledged without running anything; their dead letters stay, and cannot
 *       be replayed (no such run).</li>
 *   <li>Runs the restored table shows pending or running, whose triggers were acknowledged after the snapshot, are
 *       republished by the sweeper and run again: the restore forgot that they ran. Their effects are called again,
 *       with the same key, unless the snapshot holds the effect initiated without a result: then the effect is in
 *       doubt, is not called again, and the run fails.</li>
 *   <li>Runs finished before the snapshot are not touched; nothing stays pending; the worker goes on.</li>
 * </ul>
 */
class PostgresRestoreTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(60);
    static final List<String> TABLES = List.of("runs", "messages", "run_effects", "sweeper_state");

    /** Handler starts, by input. */
    final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();
    /** Calls of the run's one effect, by the idempotency key it was handed. */
    final Map<String, AtomicInteger> effectCalls = new ConcurrentHashMap<>();
    /** Holds the runs named "held-…" (before their effect) and "in-effect-…" (inside it) until the snapshot. */
    final CountDownLatch snapshotTaken = new CountDownLatch(1);

    final RunHandler handler = run -> {
        executions.computeIfAbsent(run.input(), k -> new AtomicInteger()).incrementAndGet();
        if (run.input().startsWith("poison")) {
            throw new IllegalStateException("poison " + run.input());
        }
        if (run.input().startsWith("held")) {
            await(snapshotTaken);
        }
        run.effects().once("notify", key -> {
            effectCalls.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            if (run.input().startsWith("in-effect")) {
                await(snapshotTaken);
            }
            return "sent";
        });
        return List.of(Reply.assistant("echo:" + run.input()));
    };

    @Test
    void unordered_orphanTriggersAreAckedUnrun_restoredUnfinishedRunsRunAgain() {
        Bus bus = bus();
        Runs first = runs(bus, "w1", workerOptions().concurrency(1).build());
        first.startWorker(handler);
        List<UUID> finished = submit(first, "finished", 5);
        Wait.until("finished runs done", WAIT, () -> count("status = 'done'") == 5);
        // One handler thread, held inside the effect of "in-effect-0": the runs submitted next stay pending.
        UUID inEffect = submit(first, "in-effect", 1).get(0);
        Wait.until("the effect of in-effect-0 initiated", WAIT, () -> effectCalls.containsKey(inEffect + ":notify"));
        List<UUID> pendingAtSnapshot = submit(first, "pending", 5);
        UUID poison = submit(first, "poison", 1).get(0);
        snapshot();
        snapshotTaken.countDown();
        Wait.until("the runs of the snapshot finished", WAIT,
                () -> count("status = 'done'") == 11 && count("status = 'failed'") == 1);
        submit(first, "after", 5);
        UUID poisonAfter = submit(first, "poison-after", 1).get(0);
        Wait.until("later runs finished", WAIT, () -> count("status = 'done'") == 16 && count("status = 'failed'") == 2);
        assertThat(bus.deadLetters().count("runs")).isEqualTo(2);
        first.close();

        // Runs whose rows the restore removes, with triggers in Redis: in the stream, three of them read by a consumer
        // that dies with them pending, and three in the delay set.
        Runs second = runs(bus, "w1", workerOptions().build());
        submit(second, "orphan", 6);
        for (int i = 0; i < 3; i++) {
            second.submit(NewRun.of("s", "u", "orphan-delayed-" + i), Duration.ofSeconds(3));
        }
        takeAndDie(3);

        restore();
        assertThat(count("true")).isEqualTo(12);
        assertThat(count("status = 'pending'")).isEqualTo(6);
        assertThat(count("status = 'running'")).isEqualTo(1);

        Runs third = runs(bus, afterRestore(false));
        third.startWorker(handler);
        third.startSweeper();
        Wait.until("every restored run finished, every trigger settled", WAIT, () -> count("status IN ('pending',"
                + " 'running')") == 0 && bus.scheduled().count("runs") == 0 && settled(bus.inspector(), third));

        for (int i = 0; i < 5; i++) {
            assertThat(executions.get("finished-" + i)).hasValue(1);
            assertThat(third.get(finished.get(i)).orElseThrow().attempts()).isEqualTo(1);
            // The restored table does not know they ran: they run again, and call their effect again with the same
            // key, which is what lets the external system tell.
            assertThat(executions.get("pending-" + i)).hasValue(2);
            assertThat(effectCalls.get(pendingAtSnapshot.get(i) + ":notify")).hasValue(2);
            assertThat(third.get(pendingAtSnapshot.get(i)).orElseThrow().status()).isEqualTo(RunStatus.DONE);
            assertThat(republishedOf(pendingAtSnapshot.get(i))).isPositive();
            assertThat(third.replies(pendingAtSnapshot.get(i))).hasSize(1);
            assertThat(executions.get("after-" + i)).hasValue(1);
        }
        // The snapshot holds its effect initiated without a result: in doubt, not called again; the run fails.
        Run doubted = third.get(inEffect).orElseThrow();
        assertThat(doubted.status()).isEqualTo(RunStatus.FAILED);
        assertThat(doubted.error().orElseThrow()).contains("EffectInDoubtException", "outcome is unknown");
        assertThat(effectCalls.get(inEffect + ":notify")).hasValue(1);
        // A poison run pending in the snapshot is tried again and dead-lettered again.
        assertThat(third.get(poison).orElseThrow().status()).isEqualTo(RunStatus.FAILED);
        assertThat(executions.get("poison-0")).hasValue(6);
        assertThat(executions.get("poison-after-0")).hasValue(3);
        assertThat(executions.keySet()).noneMatch(input -> input.startsWith("orphan"));
        assertThat(deadLetterRuns(bus)).containsExactlyInAnyOrder(poison, poisonAfter, poison);
        assertThatThrownBy(() -> third.replay(poisonAfter)).isInstanceOf(RunNotFoundException.class);

        assertThat(count("status = 'done'")).isEqualTo(10);
        assertTheWorkerGoesOn(third);
    }

    @Test
    void ordered_orphanTriggersAreAckedUnrun_andARestoredRunningRunNoLongerHoldsItsUserBack() {
        Bus bus = bus();
        Runs first = runs(bus, configBuilder(schema, "w1", workerOptions().build()).ordered(true).build());
        first.startWorker(handler);
        List<UUID> finished = submit(first, "finished", 3);
        Wait.until("finished runs done", WAIT, () -> count("status = 'done'") == 3);
        // "held-0" holds the one partition: its user's later runs wait behind it.
        UUID held = submit(first, "held", 1).get(0);
        Wait.until("held-0 running", WAIT, () -> executions.containsKey("held-0"));
        List<UUID> pendingAtSnapshot = submit(first, "pending", 3);
        snapshot();
        snapshotTaken.countDown();
        Wait.until("the runs of the snapshot done", WAIT, () -> count("status = 'done'") == 7);
        submit(first, "after", 3);
        Wait.until("later runs done", WAIT, () -> count("status = 'done'") == 10);
        first.close();

        Runs second = runs(bus, configBuilder(schema, "w1", workerOptions().build()).ordered(true).build());
        submit(second, "orphan", 6);
        takeAndDie(3);

        restore();
        assertThat(count("status = 'running'")).isEqualTo(1); // held-0, on an entry acked since
        assertThat(count("status = 'pending'")).isEqualTo(3);

        Runs third = runs(bus, afterRestore(true));
        third.startWorker(handler);
        third.startSweeper();
        Wait.until("every restored run done, every trigger settled", WAIT, () -> count("status <> 'done'") == 0
                && settled(bus.inspector(), third));

        for (int i = 0; i < 3; i++) {
            assertThat(executions.get("finished-" + i)).hasValue(1);
            assertThat(third.get(finished.get(i)).orElseThrow().attempts()).isEqualTo(1);
            assertThat(executions.get("pending-" + i)).hasValue(2);
            assertThat(third.replies(pendingAtSnapshot.get(i))).hasSize(1);
            assertThat(executions.get("after-" + i)).hasValue(1);
        }
        assertThat(executions.get("held-0")).hasValue(2);
        assertThat(third.get(held).orElseThrow().attempts()).isEqualTo(2);
        assertThat(executions.keySet()).noneMatch(input -> input.startsWith("orphan"));
        assertThat(bus.deadLetters().count("runs")).isZero();
        assertThat(orderViolations(schema)).isZero();

        assertThat(count("status = 'done'")).isEqualTo(7);
        assertTheWorkerGoesOn(third);
    }

    /**
     * The runs layer started after the restore. Its sweeper waits longer than the tests' usual 500 ms: a retry's copy
     * moved from the delay set later than that on a busy machine would be republished, and its run run once more,
     * which would blur the counts of executions this test is about.
     */
    private RunsConfig afterRestore(boolean ordered) {
        return configBuilder(schema, "w1", workerOptions().build()).ordered(ordered)
                .sweepThreshold(Duration.ofSeconds(3)).build();
    }

    /** A new run, and a submission the restore lost sent again with its key: both run, as new runs. */
    private void assertTheWorkerGoesOn(Runs runs) {
        long done = count("status = 'done'");
        UUID fresh = runs.submit(NewRun.of("s", "u", "fresh").withKey("key-fresh")).runId();
        SubmitResult again = runs.submit(NewRun.of("s", "u", "after-0").withKey("key-after-0"));
        assertThat(again.created()).isTrue();
        Wait.until("new runs done", WAIT, () -> runs.get(fresh).orElseThrow().status() == RunStatus.DONE
                && runs.get(again.runId()).orElseThrow().status() == RunStatus.DONE);
        assertThat(executions.get("after-0")).hasValue(2);
        assertThat(count("status = 'done'")).isEqualTo(done + 2);
    }

    /** A consumer named "died" reads {@code n} triggers and is never heard of again: they stay pending under it. */
    private void takeAndDie(int n) {
        var taken = redis.redis().xreadgroup(Consumer.from("run-workers", "died"), XReadArgs.Builder.count(n),
                XReadArgs.StreamOffset.lastConsumed(stream()));
        assertThat(taken).hasSize(n);
    }

    /** Nothing pending and nothing left unread in the workers' group. */
    private static boolean settled(Inspector inspector, Runs runs) {
        return inspector.groups("runs").stream().filter(g -> g.name().equals(runs.config().group()))
                .allMatch(g -> g.pending() == 0 && g.lag() == 0);
    }

    private List<UUID> deadLetterRuns(Bus bus) {
        List<UUID> out = new ArrayList<>();
        for (DeadLetter dl : bus.deadLetters().list("runs", null, 100)) {
            out.add(UUID.fromString(dl.message().id()));
        }
        return out;
    }

    private static List<UUID> submit(Runs runs, String input, int n) {
        List<UUID> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(runs.submit(NewRun.of("s", "u", input + "-" + i).withKey("key-" + input + "-" + i)).runId());
        }
        return ids;
    }

    /** A copy of the runs layer's tables, as a backup would hold them. */
    private void snapshot() {
        for (String t : TABLES) {
            execute("CREATE TABLE " + schema + ".snapshot_" + t + " AS SELECT * FROM " + schema + "." + t);
        }
    }

    /**
     * The tables as they were at the snapshot, in one transaction, as a restore leaves them. (The run counts are kept
     * by the runs table's triggers: its TRUNCATE empties them and the insert counts the restored runs.)
     */
    private void restore() {
        try (Connection c = TestDatabase.pool().getConnection(); Statement st = c.createStatement()) {
            c.setAutoCommit(false);
            st.execute("TRUNCATE " + String.join(", ", TABLES.stream().map(t -> schema + "." + t).toList()));
            for (String t : TABLES) {
                st.execute("INSERT INTO " + schema + "." + t + " SELECT * FROM " + schema + ".snapshot_" + t);
            }
            c.commit();
            c.setAutoCommit(true);
        } catch (SQLException e) {
            throw new IllegalStateException("restore", e);
        }
    }

    private long count(String condition) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE " + condition);
    }

    private static void await(CountDownLatch latch) throws InterruptedException {
        if (!latch.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
            throw new IllegalStateException("the snapshot was not taken in time");
        }
    }
}
