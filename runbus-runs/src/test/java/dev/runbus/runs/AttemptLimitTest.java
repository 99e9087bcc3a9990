package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.RetryPolicy;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A run executes at most {@code maxDeliveries} times between two replays, counted by PostgreSQL, even when Redis
 * loses its data and with it the delivery counts of the runs' triggers (real Redis, real PostgreSQL).
 */
class AttemptLimitTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(60);
    static final int MAX_DELIVERIES = 3;

    /** Counts executions per run; throws for poison input, holds input starting with "slow" until released. */
    private static final class CountingHandler implements RunHandler {
        final Map<UUID, AtomicInteger> executions = new ConcurrentHashMap<>();
        final CountDownLatch releaseSlow = new CountDownLatch(1);

        @Override
        public List<Reply> execute(RunContext run) throws Exception {
            executions.computeIfAbsent(run.runId(), k -> new AtomicInteger()).incrementAndGet();
            if (run.input().startsWith("poison")) {
                throw new IllegalArgumentException("cannot handle input " + run.input());
            }
            if (run.input().startsWith("slow")) {
                assertThat(releaseSlow.await(30, TimeUnit.SECONDS)).isTrue();
            }
            return ECHO.execute(run);
        }

        int of(UUID run) {
            AtomicInteger n = executions.get(run);
            return n == null ? 0 : n.get();
        }
    }

    private RunsConfig.Builder quickRetries() {
        return configBuilder(schema, "w1", workerOptions().maxDeliveries(MAX_DELIVERIES)
                .minIdle(Duration.ofMillis(300)).concurrency(8).build())
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(100)));
    }

    private Runs runsWithQuickRetries(Bus bus) {
        return runs(bus, quickRetries().build());
    }

    private Bus orderedBus() {
        Bus b = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).partitions("runs", 4).build());
        closeables.add(b);
        return b;
    }

    private long attemptsOf(UUID run) {
        return TestDatabase.count("SELECT attempts FROM " + schema + ".runs WHERE id = '" + run + "'");
    }

    private long unfinished() {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE status IN ('pending', 'running')");
    }

    /**
     * Good and poison runs; once every poison run of the first wave has failed at least twice, Redis loses every
     * key of the bus (as after a restart without persistence, or a FLUSHALL) while good runs execute; a second
     * wave is submitted after it. The sweeper republishes what Redis forgot, whose triggers start a new delivery
     * count: PostgreSQL's count still stops every poison run at maxDeliveries executions.
     */
    @Test
    void redisLosesItsDataMidLoad_poisonRunsStillExecuteAtMostMaxDeliveriesTimes() {
        loseRedisMidLoad(false);
    }

    /** The same in per-user order, on four partitions (no run held mid-wipe): the ordered attempt start caps too. */
    @Test
    void redisLosesItsDataMidLoad_orderedRuns_poisonRunsStillExecuteAtMostMaxDeliveriesTimes() {
        loseRedisMidLoad(true);
    }

    private void loseRedisMidLoad(boolean ordered) {
        Bus bus = ordered ? orderedBus() : bus();
        Runs runs = runs(bus, quickRetries().ordered(ordered).build());
        CountingHandler handler = new CountingHandler();
        runs.startWorker(handler);
        runs.startSweeper();
        // Ordered: no slow run, which would hold its partition, and the poison runs behind it, until released.
        int slow = ordered ? 0 : 2;
        Set<UUID> poison = new HashSet<>();
        List<UUID> all = new ArrayList<>();
        List<UUID> firstPoison = new ArrayList<>();
        for (int i = 0; i < slow; i++) {
            all.add(runs.submit(NewRun.of("s", "slow-user-" + i, "slow-" + i)).runId());
        }
        for (int i = 0; i < 30; i++) {
            boolean bad = i % 3 == 0;
            UUID id = runs.submit(NewRun.of("s", "u" + i, (bad ? "poison-" : "good-") + i)).runId();
            all.add(id);
            if (bad) {
                poison.add(id);
                firstPoison.add(id);
            }
        }
        Wait.until("every poison run of the first wave failed twice", WAIT,
                () -> firstPoison.stream().allMatch(id -> attemptsOf(id) >= 2));
        Wait.until("the slow runs executing", WAIT,
                () -> all.subList(0, slow).stream().allMatch(id -> handler.of(id) == 1));

        redis.deleteKeys(prefix); // the stream, its group and pending entries, the delay set, the dead letters

        for (int i = 30; i < 60; i++) {
            boolean bad = i % 3 == 0;
            UUID id = runs.submit(NewRun.of("s", "u" + i, (bad ? "poison-" : "good-") + i)).runId();
            all.add(id);
            if (bad) {
                poison.add(id);
            }
        }
        handler.releaseSlow.countDown();

        Wait.until("every run done or failed", WAIT, () -> unfinished() == 0);
        Set<UUID> failed = new HashSet<>();
        for (UUID id : all) {
            Run run = runs.get(id).orElseThrow();
            assertThat(run.status()).as("status of %s", run.input()).isIn(RunStatus.DONE, RunStatus.FAILED);
            if (run.status() == RunStatus.FAILED) {
                failed.add(id);
            }
            assertThat(run.nextAttemptAt()).as("next attempt of finished run %s", run.input()).isEmpty();
        }
        assertThat(failed).isEqualTo(poison);
        for (UUID id : poison) {
            assertThat(handler.of(id)).as("executions of poison run %s", id).isBetween(1, MAX_DELIVERIES);
            assertThat(attemptsOf(id)).as("attempts of poison run %s", id).isLessThanOrEqualTo(MAX_DELIVERIES);
        }
        // The first wave's poison runs had two attempts before Redis forgot them: each reached the limit.
        for (UUID id : firstPoison) {
            assertThat(runs.get(id).orElseThrow().error()).get().asString()
                    .contains("cannot handle input poison");
        }
        for (UUID id : all) {
            if (!poison.contains(id)) {
                assertThat(runs.replies(id)).as("replies of %s", id).hasSize(2);
            }
        }
    }

    /**
     * A trigger arrives for a run that already had maxDeliveries attempts (a republish after Redis lost the
     * delivery count): the run is failed, its handler not called, its trigger acked and nothing dead-lettered.
     */
    @Test
    void triggerOfARunAtTheLimit_failsItWithoutCallingTheHandler() {
        Bus bus = bus();
        Runs runs = runsWithQuickRetries(bus);
        UUID id = runs.submit(NewRun.of("s", "u", "spent")).runId();
        execute("UPDATE " + schema + ".runs SET status = 'running', attempts = " + MAX_DELIVERIES + ","
                + " error = 'java.lang.IllegalStateException: model down' WHERE id = '" + id + "'");
        CountingHandler handler = new CountingHandler();

        runs.startWorker(handler);

        Run failed = Wait.until("failed", WAIT, () -> runs.get(id).orElseThrow(), r -> r.status() == RunStatus.FAILED);
        assertThat(failed.error()).contains("gave up after 3 attempts (maxDeliveries 3); last error: "
                + "java.lang.IllegalStateException: model down");
        assertThat(failed.attempts()).isEqualTo(MAX_DELIVERIES);
        assertThat(failed.nextAttemptAt()).isEmpty();
        assertThat(handler.of(id)).isZero();
        Wait.until("trigger acked", WAIT, () -> bus.inspector().groups("runs").get(0).pending() == 0);
        assertThat(bus.deadLetters().count("runs")).isZero();
        assertThat(handler.of(id)).isZero();
        // No dead letter to alert on: the failure has a count of its own.
        assertThat(runs.counts()).isEqualTo(new RunCounts(0, 0, 0, 1, 1));
    }

    /** A replay gives a run that reached the limit a fresh budget of attempts. */
    @Test
    void replayOfARunThatReachedTheLimit_executesAgain() {
        Bus bus = bus();
        Runs runs = runsWithQuickRetries(bus);
        UUID id = runs.submit(NewRun.of("s", "u", "spent")).runId();
        execute("UPDATE " + schema + ".runs SET status = 'running', attempts = " + MAX_DELIVERIES + " WHERE id = '"
                + id + "'");
        CountingHandler handler = new CountingHandler();
        runs.startWorker(handler);
        Wait.until("failed", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.FAILED);

        assertThat(runs.counts().failedWithoutDeadLetter()).isEqualTo(1);

        runs.replay(id);

        Run done = Wait.until("done", WAIT, () -> runs.get(id).orElseThrow(), r -> r.status() == RunStatus.DONE);
        assertThat(done.attempts()).isEqualTo(MAX_DELIVERIES + 1);
        assertThat(handler.of(id)).isEqualTo(1);
        assertThat(runs.counts()).isEqualTo(new RunCounts(0, 0, 1, 0, 0));
    }
}
