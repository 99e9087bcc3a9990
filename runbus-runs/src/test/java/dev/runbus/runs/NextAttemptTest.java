package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.RetryPolicy;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** When a failed run's next attempt is due ({@link Run#nextAttemptAt()}), by the runs' retry policy. */
class NextAttemptTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    /** Fails the first attempt; the second waits for {@code release}, then echoes. */
    private static RunHandler failsOnceThenWaits(CountDownLatch release) {
        return run -> {
            if (run.attempt() == 1) {
                throw new IllegalStateException("first attempt fails");
            }
            assertThat(release.await(30, TimeUnit.SECONDS)).isTrue();
            return ECHO.execute(run);
        };
    }

    private Run afterFirstFailure(Runs runs, UUID id) {
        return Wait.until("first failure recorded", WAIT, () -> runs.get(id).orElseThrow(),
                r -> r.error().isPresent() && r.attempts() == 1);
    }

    @Test
    void failedAttempt_nextAttemptIsDueAfterThePolicysDelay_thenClearedWhenTheNextStartsAndWhenDone() {
        Duration delay = Duration.ofSeconds(2);
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().build())
                .retryPolicy(RetryPolicy.fixed(delay)).build());
        CountDownLatch release = new CountDownLatch(1);
        runs.startWorker(failsOnceThenWaits(release));
        UUID id = runs.submit(NewRun.of("s", "u", "flaky")).runId();

        Run failed = afterFirstFailure(runs, id);

        // Written in the statement that recorded the failure, so from the same now().
        assertThat(failed.nextAttemptAt()).contains(failed.updatedAt().plus(delay));
        Run second = Wait.until("second attempt running", WAIT, () -> runs.get(id).orElseThrow(),
                r -> r.attempts() == 2);
        assertThat(second.nextAttemptAt()).isEmpty();
        release.countDown();
        Run done = Wait.until("done", WAIT, () -> runs.get(id).orElseThrow(), r -> r.status() == RunStatus.DONE);
        assertThat(done.nextAttemptAt()).isEmpty();
    }

    /**
     * The default policy: about 1 s after the first failure, less up to 20% jitter; exactly the delay the bus
     * computes, from the attempt and the trigger's message id (the run id).
     */
    @Test
    void defaultPolicy_firstRetryAboutOneSecondAfterTheFailure() {
        Runs runs = runs(bus(), config(schema, "w1", workerOptions().build()));
        assertThat(runs.config().retryPolicy()).isEqualTo(RunsConfig.DEFAULT_RETRY_POLICY);
        CountDownLatch release = new CountDownLatch(1);
        try {
            runs.startWorker(failsOnceThenWaits(release));
            UUID id = runs.submit(NewRun.of("s", "u", "flaky")).runId();

            Run failed = afterFirstFailure(runs, id);

            Instant at = failed.nextAttemptAt().orElseThrow();
            assertThat(Duration.between(failed.updatedAt(), at)).isBetween(Duration.ofMillis(800),
                    Duration.ofSeconds(1));
            assertThat(at).isEqualTo(failed.updatedAt().plus(
                    RunsConfig.DEFAULT_RETRY_POLICY.delayAfter(1, id.toString())));
        } finally {
            release.countDown();
        }
    }

    /** On idle: the bus takes the entry again once idle for minIdle, so that is when it is due. */
    @Test
    void onIdlePolicy_nextAttemptIsDueAfterMinIdle() {
        Duration minIdle = Duration.ofMillis(1500);
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().minIdle(minIdle).build())
                .retryPolicy(RetryPolicy.onIdle()).build());
        CountDownLatch release = new CountDownLatch(1);
        try {
            runs.startWorker(failsOnceThenWaits(release));
            UUID id = runs.submit(NewRun.of("s", "u", "flaky")).runId();

            Run failed = afterFirstFailure(runs, id);

            assertThat(failed.nextAttemptAt()).contains(failed.updatedAt().plus(minIdle));
        } finally {
            release.countDown();
        }
    }

    /** The last allowed attempt fails: no next attempt is due, and the run ends failed without one. */
    @Test
    void lastAttemptFails_noNextAttempt() {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().maxDeliveries(1).build())
                .retryPolicy(RetryPolicy.fixed(Duration.ofSeconds(5))).build());
        runs.startWorker(ALWAYS_FAILS);
        UUID id = runs.submit(NewRun.of("s", "u", "poison")).runId();

        Run failed = Wait.until("failed", WAIT, () -> runs.get(id).orElseThrow(), r -> r.status() == RunStatus.FAILED);

        assertThat(failed.nextAttemptAt()).isEmpty();
    }

    @Test
    void retryPolicyIsSetOnTheRunsConfigNotOnTheWorkerOptions() {
        SubscribeOptions withPolicy = workerOptions().retryPolicy(RetryPolicy.fixed(Duration.ofSeconds(3))).build();
        assertThatThrownBy(() -> configBuilder(schema, "w1", withPolicy).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RunsConfig.retryPolicy");
        RunsConfig config = configBuilder(schema, "w1", workerOptions().build())
                .retryPolicy(RetryPolicy.fixed(Duration.ofSeconds(3))).build();
        assertThat(config.workerSubscription().retryPolicy()).isEqualTo(RetryPolicy.fixed(Duration.ofSeconds(3)));
    }
}
