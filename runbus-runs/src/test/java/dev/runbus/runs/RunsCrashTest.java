package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.runs.internal.worker.CrashPoints.Point;
import dev.runbus.runs.testing.RunsNode;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every crash point between two writes converges: a child JVM runs the runs layer, stops at one point, and is
 * killed with SIGKILL there; then a fresh worker and the sweeper take over. Every run ends done (or failed
 * for poison) with its replies exactly once.
 */
@Tag("chaos")
class RunsCrashTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(60);

    private ChildJvm child(Point point, String role, String input) throws Exception {
        return ChildJvm.start(RunsNode.class, redis.uri(), prefix, TestDatabase.URL, schema, point.name(), role,
                input);
    }

    private List<UUID> submit(Runs runs, int n, String input) {
        List<UUID> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(runs.submit(NewRun.of("s", "u", input + "-" + i)).runId());
        }
        return ids;
    }

    private long runsIn(RunStatus status) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE status = '" + status.sql() + "'");
    }

    private void assertAllDoneWithRepliesOnce(Runs runs, List<UUID> ids) {
        Wait.until("every run done", WAIT, () -> runsIn(RunStatus.DONE) == ids.size());
        for (UUID id : ids) {
            assertThat(replyRows(id)).as("reply rows of %s", id).isEqualTo(2);
            assertThat(runs.replies(id).get(0).content()).startsWith("echo:");
        }
    }

    @Test
    void crashAfterInsertBeforePublish() throws Exception {
        try (ChildJvm c = child(Point.AFTER_INSERT_BEFORE_PUBLISH, "submit", "lonely")) {
            c.awaitLine("AT AFTER_INSERT_BEFORE_PUBLISH", WAIT);
            c.kill();
        }
        assertThat(runsIn(RunStatus.PENDING)).isEqualTo(1);
        assertThat(redis.redis().exists(stream())).isZero(); // the trigger never left

        Runs runs = runs(bus(), "survivor", workerOptions().build());
        runs.startWorker(ECHO);
        runs.startSweeper();
        List<UUID> ids = List.of(onlyRun());
        assertAllDoneWithRepliesOnce(runs, ids);
        Run run = runs.get(ids.get(0)).orElseThrow();
        assertThat(run.republished()).isEqualTo(1);
        assertThat(run.attempts()).isEqualTo(1);
    }

    @Test
    void crashAfterHandlerBeforeCommit() throws Exception {
        Bus bus = bus();
        // A lease of 3 s: a survivor starved of CPU past a 1 s lease lost a claim while its handler ran, and a run
        // got a second attempt there (loaded run 64); this test counts the attempts the crash alone causes.
        Runs runs = runs(bus, "survivor", workerOptions().minIdle(Duration.ofSeconds(3)).build());
        List<UUID> ids = submit(runs, 5, "work");
        try (ChildJvm c = child(Point.AFTER_HANDLER_BEFORE_COMMIT, "worker", "ok")) {
            c.awaitLine("AT AFTER_HANDLER_BEFORE_COMMIT", WAIT);
            c.kill();
        }
        assertThat(runsIn(RunStatus.DONE)).isZero();
        // The child started the attempts of its whole read batch in one transaction.
        long startedByChild = TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE attempts = 1");
        assertThat(startedByChild).isBetween(1L, 5L);
        runs.startWorker(ECHO);
        runs.startSweeper();
        assertAllDoneWithRepliesOnce(runs, ids);
        // The runs the child had started were attempted twice (once by the dead child), committed once.
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE attempts = 2"))
                .as("runs attempted twice; attempts per run: %s", attemptsOf(ids)).isEqualTo(startedByChild);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE attempts = 1"))
                .isEqualTo(5 - startedByChild);
    }

    private List<Long> attemptsOf(List<UUID> ids) {
        List<Long> attempts = new ArrayList<>();
        for (UUID id : ids) {
            attempts.add(TestDatabase.count("SELECT attempts FROM " + schema + ".runs WHERE id = '" + id + "'"));
        }
        return attempts;
    }

    @Test
    void crashAfterCommitBeforeAck() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, "survivor", workerOptions().build());
        List<UUID> ids = submit(runs, 5, "work");
        try (ChildJvm c = child(Point.AFTER_COMMIT_BEFORE_ACK, "worker", "ok")) {
            c.awaitLine("AT AFTER_COMMIT_BEFORE_ACK", WAIT);
            c.kill();
        }
        List<UUID> doneAtCrash = ids.stream()
                .filter(id -> runs.get(id).orElseThrow().status() == RunStatus.DONE).toList();
        assertThat(doneAtCrash).isNotEmpty();
        assertThat(bus.inspector().groups("runs").get(0).pending()).isGreaterThanOrEqualTo(1); // not acked
        runs.startWorker(ECHO);
        runs.startSweeper();
        assertAllDoneWithRepliesOnce(runs, ids);
        Wait.until("every trigger acked", WAIT, () -> bus.inspector().groups("runs").get(0).pending() == 0);
        // The redelivered triggers of the committed runs found them done and were only acked: no second attempt.
        for (UUID id : doneAtCrash) {
            assertThat(runs.get(id).orElseThrow().attempts()).as("attempts of %s", id).isEqualTo(1);
        }
    }

    @Test
    void crashAfterDeadLetterBeforeRunMarkedFailed() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, "survivor", workerOptions().build());
        UUID poison = runs.submit(NewRun.of("s", "u", "poison")).runId();
        try (ChildJvm c = child(Point.AFTER_DEAD_LETTER_BEFORE_FAILED, "worker", "poison")) {
            c.awaitLine("AT AFTER_DEAD_LETTER_BEFORE_FAILED", WAIT);
            c.kill();
        }
        assertThat(bus.deadLetters().count("runs")).isEqualTo(1);
        assertThat(runs.get(poison).orElseThrow().status()).isEqualTo(RunStatus.RUNNING);

        runs.startWorker(ECHO);
        // The run's current attempt is the dead-lettered entry, whatever the clocks: the sweep fails it.
        SweepResult sweep = runs.sweepOnce();
        assertThat(sweep.deadLettersReconciled()).isEqualTo(1);
        Run failed = runs.get(poison).orElseThrow();
        assertThat(failed.status()).isEqualTo(RunStatus.FAILED);
        assertThat(failed.error()).get().asString().contains("cannot handle input poison");
        assertThat(failed.deadLetterId()).contains(bus.deadLetters().list("runs", null, 1).get(0).id());
        assertThat(runs.replies(poison)).isEmpty();
        assertThat(failed.attempts()).isEqualTo(1);
        // Nothing is republished for it (a failed run changes only by replay), and nothing reconciled twice.
        SweepResult again = runs.sweepOnce();
        assertThat(again.republished()).isZero();
        assertThat(again.deadLettersReconciled()).isZero();
    }

    private UUID onlyRun() throws Exception {
        try (var c = TestDatabase.pool().getConnection(); var st = c.createStatement();
             var rs = st.executeQuery("SELECT id FROM " + schema + ".runs")) {
            rs.next();
            return rs.getObject(1, UUID.class);
        }
    }
}
