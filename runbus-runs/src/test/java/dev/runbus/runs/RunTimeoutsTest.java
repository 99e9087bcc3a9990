package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.RetryPolicy;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Range;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Expiry ({@link NewRun#withExpireAfter}): a run not started before it is expired, never started, checked by its
 * trigger and by the sweeper, and in per-user order an expired run holds up no later run of its user. Execution
 * timeouts ({@link NewRun#withTimeout}, {@link RunsConfig#executionTimeout()}): a handler past its timeout is told,
 * then interrupted after the grace, and the attempt fails under the retry policy.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class RunTimeoutsTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(60);

    /** Whether PostgreSQL's clock is past the run's expiry. */
    private static boolean pastExpiry(String schema, UUID id) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE id = '" + id
                + "' AND expires_at <= now()") == 1;
    }

    @Test
    void aRunNotStartedBeforeItsExpiryEndsExpired_andItsTriggerIsAckedWithoutARun() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        UUID late = runs.submit(NewRun.of("s", "u", "late").withExpireAfter(Duration.ofMillis(300))).runId();
        UUID inTime = runs.submit(NewRun.of("s", "u", "in time").withExpireAfter(Duration.ofDays(1))).runId();
        Wait.until("past its expiry by PostgreSQL's clock", WAIT, () -> pastExpiry(schema, late));
        AtomicInteger calls = new AtomicInteger();
        List<String> ran = Collections.synchronizedList(new ArrayList<>());
        runs.startWorker(run -> {
            calls.incrementAndGet();
            ran.add(run.input());
            return List.of(Reply.assistant("ok"));
        });
        Wait.until("the run in time done", WAIT, () -> runs.get(inTime).orElseThrow().status() == RunStatus.DONE);
        Wait.until("the late run expired", WAIT, () -> runs.get(late).orElseThrow().status() == RunStatus.EXPIRED);
        Bus bus = bus();
        Wait.until("both triggers acked", WAIT, () -> bus.inspector().groups("runs").get(0).pending() == 0);
        assertThat(ran).containsExactly("in time");
        Run expired = runs.get(late).orElseThrow();
        assertThat(expired.attempts()).isZero();
        assertThat(expired.error()).hasValueSatisfying(e -> assertThat(e).startsWith("expired at ")
                .endsWith(" before it started"));
        assertThat(runs.counts().expired()).isEqualTo(1);
        assertThat(runs.counts().done()).isEqualTo(1);
        assertThatThrownBy(() -> runs.cancel(late)).isInstanceOf(IllegalRunTransitionException.class)
                .hasMessageContaining("is expired");
    }

    /** Only a first start is bounded: a failed run replayed after its expiry runs again, it does not expire. */
    @Test
    void aRunReplayedAfterItsExpiryRunsAgain() {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().maxDeliveries(1).build())
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(100))).build());
        AtomicInteger calls = new AtomicInteger();
        runs.startWorker(run -> {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("the first attempt fails");
            }
            return List.of(Reply.assistant("replayed"));
        });
        UUID id = runs.submit(NewRun.of("s", "u", "replayed late").withExpireAfter(Duration.ofMillis(500))).runId();
        Wait.until("failed", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.FAILED);
        Wait.until("past its expiry by PostgreSQL's clock", WAIT, () -> pastExpiry(schema, id));
        runs.replay(id);
        age(id);
        assertThat(runs.sweepOnce().expired()).as("the sweeper leaves a replayed run be").isZero();
        Wait.until("done on its replay", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        assertThat(calls).hasValue(2);
    }

    @Test
    void theSweeperExpiresARunWhoseTriggerIsLost_ratherThanRepublishingIt() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        UUID lost = lostRun("lost and late", Duration.ofMinutes(5));
        UUID lostInTime = lostRun("lost in time", Duration.ofMinutes(5));
        execute("UPDATE " + schema + ".runs SET expires_at = now() - interval '1 second' WHERE id = '" + lost + "'");
        execute("UPDATE " + schema + ".runs SET expires_at = now() + interval '1 day' WHERE id = '" + lostInTime
                + "'");
        SweepResult swept = runs.sweepOnce();
        assertThat(swept.expired()).isEqualTo(1);
        assertThat(swept.republished()).as("only the run in time").isEqualTo(1);
        assertThat(runs.get(lost).orElseThrow().status()).isEqualTo(RunStatus.EXPIRED);
        assertThat(republishedOf(lost)).isZero();
        assertThat(runs.sweepOnce().expired()).as("once").isZero();
    }

    @Test
    void anExpiryThatComesBeforeTheRunsDelayIsRefused_asIsOneOutOfRange() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        assertThatThrownBy(() -> runs.submit(NewRun.of("s", "u", "x").withExpireAfter(Duration.ofSeconds(1)),
                Duration.ofSeconds(2))).isInstanceOf(InvalidRunException.class).hasMessageContaining("expireAfter");
        assertThatThrownBy(() -> NewRun.of("s", "u", "x").withExpireAfter(Duration.ZERO))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("expireAfter");
        assertThatThrownBy(() -> NewRun.of("s", "u", "x").withTimeout(Duration.ofDays(31)))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("timeout");
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs")).isZero();
    }

    @Test
    void inPerUserOrderAnExpiredRunHoldsUpNoLaterRunOfItsUser() {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().build()).ordered(true).build());
        UUID first = runs.submit(NewRun.of("s", "u", "first").withExpireAfter(Duration.ofMillis(300))).runId();
        // Its trigger is lost: only the second run's trigger will come, and finds the first one still pending.
        String entry = redis.redis().xrange(stream(), Range.create("-", "+")).get(0).getId();
        redis.redis().xdel(stream(), entry);
        UUID second = runs.submit(NewRun.of("s", "u", "second")).runId();
        Wait.until("past its expiry by PostgreSQL's clock", WAIT, () -> pastExpiry(schema, first));
        List<String> ran = Collections.synchronizedList(new ArrayList<>());
        runs.startWorker(run -> {
            ran.add(run.input());
            return List.of(Reply.assistant("ok"));
        });
        Wait.until("the second run done", WAIT, () -> runs.get(second).orElseThrow().status() == RunStatus.DONE);
        assertThat(ran).containsExactly("second");
        assertThat(redis.redis().xlen(stream())).as("no trigger republished to wait behind the expired run")
                .isEqualTo(1);
        assertThat(runs.get(first).orElseThrow().status()).as("not started; the sweeper will expire it")
                .isEqualTo(RunStatus.PENDING);
        age(first);
        assertThat(runs.sweepOnce().expired()).isEqualTo(1);
        assertThat(runs.get(first).orElseThrow().status()).isEqualTo(RunStatus.EXPIRED);
        assertThat(orderViolations(schema)).isZero();
    }

    @Test
    void anAttemptPastItsTimeoutIsTold_thenInterruptedAfterTheGrace_andRetried() {
        Duration timeout = Duration.ofMillis(500);
        Duration grace = Duration.ofMillis(500);
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().maxDeliveries(3).build())
                .cancelGrace(grace).retryPolicy(RetryPolicy.fixed(Duration.ofMillis(200))).build());
        AtomicLong started = new AtomicLong();
        AtomicLong told = new AtomicLong();
        AtomicLong interrupted = new AtomicLong();
        runs.startWorker(run -> {
            if (run.attempt() == 1) {
                started.set(System.nanoTime());
                while (!run.isCancelRequested()) {
                    Thread.sleep(5);
                }
                told.set(System.nanoTime());
                try {
                    Thread.sleep(TimeUnit.MINUTES.toMillis(10)); // ignores it
                } catch (InterruptedException e) {
                    interrupted.set(System.nanoTime());
                    throw e;
                }
            }
            return List.of(Reply.assistant("second attempt"));
        });
        UUID id = runs.submit(NewRun.of("s", "u", "slow once").withTimeout(timeout)).runId();
        Wait.until("done on its second attempt", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        Run run = runs.get(id).orElseThrow();
        assertThat(run.attempts()).isEqualTo(2);
        assertThat(runs.replies(id)).extracting(StoredReply::content).containsExactly("second attempt");
        long toldAfter = (told.get() - started.get()) / 1_000_000;
        long interruptedAfter = (interrupted.get() - told.get()) / 1_000_000;
        System.out.printf("attempt timeout %d ms: told after %d ms, interrupted %d ms later (grace %d ms)%n",
                timeout.toMillis(), toldAfter, interruptedAfter, grace.toMillis());
        assertThat(toldAfter).as("told at its timeout, not before").isGreaterThanOrEqualTo(timeout.toMillis());
        assertThat(interruptedAfter).as("interrupted after the grace, not before")
                .isGreaterThanOrEqualTo(grace.toMillis() - 50);
    }

    @Test
    void underTheConfiguredTimeoutAnAttemptThatAlwaysRunsTooLongFailsTheRun() {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().maxDeliveries(2).build())
                .executionTimeout(Duration.ofMillis(300)).cancelGrace(Duration.ZERO)
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(100))).build());
        AtomicInteger calls = new AtomicInteger();
        runs.startWorker(run -> {
            calls.incrementAndGet();
            Thread.sleep(TimeUnit.MINUTES.toMillis(10)); // interrupted at its timeout: the grace is zero
            return List.of();
        });
        UUID id = runs.submit(NewRun.of("s", "u", "always slow")).runId();
        Wait.until("failed", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.FAILED);
        Run run = runs.get(id).orElseThrow();
        assertThat(run.attempts()).isEqualTo(2);
        assertThat(calls).hasValue(2);
        assertThat(run.error()).hasValueSatisfying(e -> assertThat(e).contains("timed out after PT0.3S"));
    }
}
