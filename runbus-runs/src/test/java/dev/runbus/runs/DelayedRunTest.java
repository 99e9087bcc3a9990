package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@link Runs#submit(NewRun, Duration)}: the run is pending with its due time, its trigger waits in the delay set
 * and runs when due; the sweeper leaves a run that is not due alone; a cancel takes the trigger out.
 */
class DelayedRunTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aDelayedRunIsPendingUntilItsTriggerIsDue_thenRuns() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        runs.startWorker(ECHO);
        UUID id = runs.submit(NewRun.of("s", "u", "later"), Duration.ofMillis(1500)).runId();
        Run waiting = runs.get(id).orElseThrow();
        assertThat(waiting.status()).isEqualTo(RunStatus.PENDING);
        assertThat(waiting.nextAttemptAt()).isPresent();
        assertThat(Duration.between(waiting.createdAt(), waiting.nextAttemptAt().get()))
                .isBetween(Duration.ofMillis(1400), Duration.ofMillis(1600));
        assertThat(bus.scheduled().count("runs")).isEqualTo(1);
        Wait.until("done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        // The first reply was written by the attempt, which could not start before the trigger was due.
        assertThat(Duration.between(waiting.createdAt(), runs.replies(id).get(0).createdAt()))
                .isGreaterThanOrEqualTo(Duration.ofMillis(1400));
        assertThat(runs.get(id).orElseThrow().nextAttemptAt()).isEmpty();
    }

    @Test
    void theSweeperLeavesARunThatIsNotDue_andCancelTakesItsTriggerOut() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        UUID id = runs.submit(NewRun.of("s", "u", "in an hour"), Duration.ofHours(1)).runId();
        age(id); // not moved for a minute: an immediate run would be swept
        SweepResult swept = runs.sweepOnce();
        assertThat(swept.republished()).isZero();
        assertThat(republishedOf(id)).isZero();
        assertThat(bus.scheduled().count("runs")).isEqualTo(1);

        runs.cancel(id);
        assertThat(runs.get(id).orElseThrow().status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(bus.scheduled().count("runs")).isZero();
    }

    @Test
    void delaysAreBounded_andRefusedForRunsInPerUserOrder() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        assertThatThrownBy(() -> runs.submit(NewRun.of("s", "u", "x"), Duration.ofSeconds(-1)))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("delay");
        assertThatThrownBy(() -> runs.submit(NewRun.of("s", "u", "x"), Runs.MAX_DELAY.plusSeconds(1)))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("30 days");
        assertThat(runs.list(RunQuery.newest()).runs()).isEmpty();
        Runs ordered = runs(bus(), configBuilder(schema + "_o", "w1", workerOptions().build()).ordered(true).build());
        closeables.add(() -> TestServers.dropSchema(schema + "_o"));
        assertThatThrownBy(() -> ordered.submit(NewRun.of("s", "u", "x"), Duration.ofMinutes(1)))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("per-user order");
        assertThat(ordered.submit(NewRun.of("s", "u", "now"), Duration.ZERO).created()).isTrue();
        List<Run> none = runs.list(RunQuery.newest()).runs();
        assertThat(none).isEmpty();
    }
}
