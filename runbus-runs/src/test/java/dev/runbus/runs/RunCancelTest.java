package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link Runs#cancel}: a pending run whose trigger is still in the stream never reaches the handler, its trigger
 * is acked, the sweeper does not revive it; in per-user order it does not hold up the user's later runs; a done or
 * failed run cannot be cancelled. (A running run's cancel: {@link CancelRunningRunTest}.)
 */
class RunCancelTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aCancelledRunNeverRuns_itsTriggerIsAcked_andTheSweeperLeavesIt() {
        check(runs(bus(), "w1", workerOptions().build()));
    }

    @Test
    void inPerUserOrderACancelledRunDoesNotHoldUpTheUsersLaterRuns() {
        check(runs(bus(), configBuilder(schema, "w1", workerOptions().build()).ordered(true).build()));
    }

    private void check(Runs runs) {
        Bus bus = bus();
        UUID cancelled = runs.submit(NewRun.of("s", "u", "never")).runId(); // no worker yet: its trigger waits
        runs.cancel(cancelled);
        runs.cancel(cancelled); // again: nothing changes, nothing is thrown
        assertThat(runs.get(cancelled).orElseThrow().status()).isEqualTo(RunStatus.CANCELLED);
        UUID later = runs.submit(NewRun.of("s", "u", "later")).runId();
        Set<String> seen = ConcurrentHashMap.newKeySet();
        runs.startWorker(run -> {
            seen.add(run.input());
            return List.of(Reply.assistant("ok"));
        });
        Wait.until("later run done", WAIT, () -> runs.get(later).orElseThrow().status() == RunStatus.DONE);
        Wait.until("both triggers acked", WAIT, () -> bus.inspector().groups("runs").get(0).pending() == 0);
        assertThat(seen).containsExactly("later");
        Run run = runs.get(cancelled).orElseThrow();
        assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(run.attempts()).isZero();

        age(cancelled);
        long entries = bus.inspector().groups("runs").get(0).pending();
        SweepResult swept = runs.sweepOnce();
        assertThat(swept.republished()).isZero();
        assertThat(republishedOf(cancelled)).isZero();
        assertThat(bus.inspector().groups("runs").get(0).pending()).isEqualTo(entries);
        assertThat(runs.get(cancelled).orElseThrow().status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(runs.counts()).isEqualTo(new RunCounts(0, 0, 1, 0, 0, 1));
        assertThat(seen).containsExactly("later");
    }

    @Test
    void doneFailedAndUnknownRunsCannotBeCancelled() throws Exception {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        CountDownLatch release = new CountDownLatch(1);
        runs.startWorker(run -> {
            if (run.input().equals("hold")) {
                release.await(30, TimeUnit.SECONDS);
            }
            return List.of(Reply.assistant("ok"));
        });
        UUID held = runs.submit(NewRun.of("s", "u", "hold")).runId();
        Wait.until("running", WAIT, () -> runs.get(held).orElseThrow().status() == RunStatus.RUNNING);
        UUID done = runs.submit(NewRun.of("s", "u", "quick")).runId();
        Wait.until("done", WAIT, () -> runs.get(done).orElseThrow().status() == RunStatus.DONE);
        assertThatThrownBy(() -> runs.cancel(done)).isInstanceOf(IllegalRunTransitionException.class)
                .hasMessageContaining("is done");
        release.countDown(); // the held run stays running: no cancel was asked for
        Wait.until("held done", WAIT, () -> runs.get(held).orElseThrow().status() == RunStatus.DONE);
        assertThatThrownBy(() -> runs.cancel(UUID.randomUUID())).isInstanceOf(RunNotFoundException.class);
        UUID failed = lostRun("failed-by-hand", Duration.ZERO);
        execute("UPDATE " + schema + ".runs SET status = 'failed' WHERE id = '" + failed + "'");
        assertThatThrownBy(() -> runs.cancel(failed)).isInstanceOf(IllegalRunTransitionException.class)
                .hasMessageContaining("is failed");
    }
}
