package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@link Runs#deleteFinished}: done, failed and cancelled runs that finished before the bound go, with their replies
 * and effects, in batches; pending (delayed ones too) and running runs stay however old, as do runs finished after
 * the bound; the counts follow.
 */
class DeleteFinishedRunsTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void deletesOnlyRunsFinishedBeforeTheBound_withTheirRepliesAndEffects_inBatches() {
        Runs runs = runs(bus(), "w1", workerOptions().maxDeliveries(1).build());
        runs.startWorker(run -> {
            if (run.input().startsWith("poison")) {
                throw new IllegalStateException("poison");
            }
            String effect = run.effects().once("notify", key -> "sent:" + key);
            return List.of(Reply.assistant("echo:" + run.input()), new Reply("tool", effect));
        });
        List<UUID> done = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            done.add(runs.submit(NewRun.of("s", "u" + i, "ok-" + i)).runId());
        }
        List<UUID> failed = List.of(runs.submit(NewRun.of("s", "u", "poison-1")).runId(),
                runs.submit(NewRun.of("s", "u", "poison-2")).runId());
        UUID cancelled = runs.submit(NewRun.of("s", "u", "later"), Duration.ofHours(1)).runId();
        runs.cancel(cancelled);
        UUID scheduled = runs.submit(NewRun.of("s", "u", "tomorrow"), Duration.ofDays(1)).runId();
        UUID pending = lostRun("lost", Duration.ofDays(3));
        UUID running = UUID.randomUUID();
        execute("INSERT INTO " + schema + ".runs (id, idempotency_key, input_hash, session_id, user_id, input, status,"
                + " attempts, started_at) VALUES ('" + running + "', 'k-running', 'hash', 's', 'u', 'busy', 'running', 1,"
                + " now())");
        Wait.until("runs finished", WAIT, () -> done.stream().allMatch(id -> status(runs, id) == RunStatus.DONE)
                && failed.stream().allMatch(id -> status(runs, id) == RunStatus.FAILED));

        // Everything so far happened two days ago; one more run finishes now.
        execute("UPDATE " + schema + ".runs SET created_at = created_at - interval '2 days',"
                + " updated_at = updated_at - interval '2 days', finished_at = finished_at - interval '2 days'");
        UUID recent = runs.submit(NewRun.of("s", "u", "ok-recent")).runId();
        Wait.until("recent run done", WAIT, () -> status(runs, recent) == RunStatus.DONE);
        // A run finished by hand without finished_at is judged by updated_at.
        UUID byHand = lostRun("by hand", Duration.ofDays(2));
        execute("UPDATE " + schema + ".runs SET status = 'done', created_at = now() - interval '3 days',"
                + " updated_at = now() - interval '2 days' WHERE id = '"
                + byHand + "'");

        Instant bound = Instant.now().minus(Duration.ofDays(1));
        Set<UUID> expected = new java.util.HashSet<>(done);
        expected.addAll(failed);
        expected.add(cancelled);
        expected.add(byHand);
        assertThat(runs.countFinished(bound)).isEqualTo(expected.size());
        assertThat(effectRows()).isEqualTo(done.size() + 1); // and the recent run's

        List<Long> progress = new CopyOnWriteArrayList<>();
        long deleted = runs.deleteFinished(bound, 3, progress::add);

        assertThat(deleted).isEqualTo(expected.size());
        // 8 done in batches of 3, then 2 failed, then 1 cancelled: a call after each batch, with the running total.
        assertThat(progress).containsExactly(3L, 6L, 8L, 10L, 11L);
        for (UUID id : expected) {
            assertThat(runs.get(id)).as("run %s", id).isEmpty();
            assertThat(replyRows(id)).isZero();
        }
        for (UUID id : List.of(scheduled, pending, running, recent)) {
            assertThat(runs.get(id)).as("run %s", id).isPresent();
        }
        assertThat(status(runs, scheduled)).isEqualTo(RunStatus.PENDING);
        assertThat(replyRows(recent)).isEqualTo(2);
        assertThat(effectRows()).isEqualTo(1); // the recent run's
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs")).isEqualTo(4);
        assertThat(runs.counts()).isEqualTo(new RunCounts(2, 1, 1, 0, 0, 0));
        assertThat(runs.countFinished(bound)).isZero();
        assertThat(runs.deleteFinished(bound, 3)).isZero(); // again: nothing left to delete
    }

    @Test
    void refusesABatchOutOfRange_andABoundOutsideTheYearsARunCanHave() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        assertThatThrownBy(() -> runs.deleteFinished(Instant.now(), 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("batchSize must be between 1 and " + Runs.MAX_DELETE_BATCH + ", not 0");
        assertThatThrownBy(() -> runs.deleteFinished(Instant.now(), Runs.MAX_DELETE_BATCH + 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> runs.countFinished(Instant.parse("+10000-01-01T00:00:00Z")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("finishedBefore must be between");
    }

    private long effectRows() {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".run_effects");
    }

    private static RunStatus status(Runs runs, UUID id) {
        return runs.get(id).orElseThrow().status();
    }
}
