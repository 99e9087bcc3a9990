package dev.runbus.runs;

import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.RetryPolicy;
import dev.runbus.RunbusException;
import dev.runbus.runs.testing.Faults;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Range;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The sweeper against a real PostgreSQL and a real Redis: what it republishes, and that it keeps going. */
@OnDeployments({LOCAL, REDIS_62})
class SweeperTest extends RunsTestSupport {

    SweeperTest(Deployment deployment) {
        super(deployment);
    }

    static final Duration WAIT = Duration.ofSeconds(30);

    private long runsIn(RunStatus status) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE status = '" + status.sql() + "'");
    }

    /** A handler that holds runs whose input starts with "live" until released, and echoes the others. */
    private static RunHandler holdingLive(CountDownLatch release) {
        return run -> {
            if (run.input().startsWith("live")) {
                assertThat(release.await(60, TimeUnit.SECONDS)).isTrue();
            }
            return ECHO.execute(run);
        };
    }

    /** A proxy to the tests' Redis, closed after the buses that use it. */
    private TcpProxy proxyToRedis() {
        URI redisUri = URI.create(redis.uri());
        TcpProxy proxy = TcpProxy.start(redisUri.getHost(), redisUri.getPort());
        closeables.add(proxy);
        return proxy;
    }

    private Bus busThrough(TcpProxy proxy, Duration commandTimeout) {
        Bus b = Bus.connect(BusConfig.builder(proxy.uri()).keyPrefix(prefix).commandTimeout(commandTimeout).build());
        closeables.add(b);
        return b;
    }

    /** A run whose handler is executing (its trigger pending in Redis), untouched long enough to be swept. */
    private UUID liveRun(Runs worker, CountDownLatch release) {
        worker.startWorker(holdingLive(release));
        UUID id = worker.submit(NewRun.of("s", "u", "live")).runId();
        Wait.until("running", WAIT, () -> runsIn(RunStatus.RUNNING) == 1);
        age(id);
        return id;
    }

    /**
     * Issue 10, defect 2: XPENDING times out (Redis unreachable for longer than the command timeout) while the
     * sweeper asks whether a running run is live: the sweep stops and republishes nothing.
     */
    /**
     * A consumer reads up to its batch ahead of its handlers: nine triggers delivered to a worker with one handler,
     * waiting behind a run that holds it, are pending in Redis while their runs are pending in PostgreSQL. A sweep
     * past the threshold must not take them for lost (the group was delivered entries from their time on, but has
     * not acknowledged them): published again, they would run twice (loaded run 74 of the test command).
     */
    @Test
    void triggersDeliveredAndWaitingForAHandler_areNotTakenForLost() {
        CountDownLatch release = new CountDownLatch(1);
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().concurrency(1).build());
        runs.startWorker(holdingLive(release));
        List<UUID> ids = new ArrayList<>();
        ids.add(runs.submit(NewRun.of("s", "u", "live")).runId());
        for (int i = 0; i < 9; i++) {
            ids.add(runs.submit(NewRun.of("s", "u", "behind-" + i)).runId());
        }
        Wait.until("the first running, the nine delivered behind it and older than the threshold", WAIT,
                () -> runsIn(RunStatus.RUNNING) == 1 && TestDatabase.count("SELECT count(*) FROM " + schema
                        + ".runs WHERE status = 'pending' AND updated_at < now() - interval '700 milliseconds'") == 9
                        && bus.inspector().partitions("runs", RunsConfig.DEFAULT_GROUP).get(0).pending() == 10);
        assertThat(runs.sweepOnce().republished()).as("nothing taken for lost").isZero();

        release.countDown();
        Wait.until("all ten done", WAIT, () -> runsIn(RunStatus.DONE) == 10);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE attempts <> 1"))
                .as("each run once").isZero();
    }

    @Test
    void xpendingTimesOut_sweepRepublishesNothing() {
        CountDownLatch release = new CountDownLatch(1);
        try {
            UUID live = liveRun(runs(bus(), "w1", workerOptions().build()), release);
            TcpProxy proxy = proxyToRedis();
            // Redis stops answering for exactly the XPENDING, which times out; it answers again afterwards.
            Bus sweeperBus = Faults.aroundPendingEntry(busThrough(proxy, Duration.ofSeconds(1)), proxy::pause,
                    proxy::resume);
            Runs sweeper = runs(sweeperBus, config(schema, "sweeper", workerOptions().build()));

            assertThatThrownBy(sweeper::sweepOnce).isInstanceOf(RunbusException.class)
                    .hasMessageContaining("pending entry");

            assertThat(republishedOf(live)).isZero();
            assertThat(redis.redis().xlen(stream())).isEqualTo(1);
            assertThat(runsIn(RunStatus.RUNNING)).isEqualTo(1);
        } finally {
            release.countDown();
        }
    }

    /**
     * A trigger dead-lettered after the sweep read its candidates and before it asked Redis about them (the
     * listener's mark lost, as in a crash): XPENDING finds the entry gone, and the run must end failed by its
     * dead letter, not be republished (which would clear its stream entry, so that no mark of that dead
     * letter could ever fail it, and run it again).
     */
    @Test
    void triggerDeadLetteredWhileTheSweepAsksRedis_failsTheRunInsteadOfRepublishingIt() {
        CountDownLatch release = new CountDownLatch(1);
        try {
            Runs worker = runs(bus(), "w1", workerOptions().build());
            UUID id = liveRun(worker, release);
            String entry = redis.redis().xrange(stream(), Range.create("-", "+")).get(0).getId();
            AtomicBoolean moved = new AtomicBoolean();
            Bus sweeperBus = Faults.aroundPendingEntry(bus(), () -> {
                if (moved.compareAndSet(false, true)) {
                    deadLetterWithoutListeners(entry);
                }
            }, () -> { });
            Runs sweeper = runs(sweeperBus, config(schema, "sweeper", workerOptions().build()));

            SweepResult r = sweeper.sweepOnce();

            assertThat(moved).isTrue();
            assertThat(r.republished()).isZero();
            assertThat(r.deadLettersReconciled()).isEqualTo(1);
            assertThat(worker.get(id).orElseThrow().status()).isEqualTo(RunStatus.FAILED);
            assertThat(republishedOf(id)).isZero();
            assertThat(redis.redis().xlen(stream())).isEqualTo(1);
        } finally {
            release.countDown();
        }
    }

    /**
     * Issue 10, defect 12: a sweep waiting on Redis holds no row lock, so the run it examines completes in
     * the meantime; and the sweep then republishes nothing for it.
     */
    @Test
    void completionIsNotBlockedWhileASweepWaitsOnRedis() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try {
            Runs worker = runs(bus(), "w1", workerOptions().build());
            UUID id = liveRun(worker, release);
            TcpProxy proxy = proxyToRedis();
            CountDownLatch sweepWaits = new CountDownLatch(1);
            Bus sweeperBus = Faults.aroundPendingEntry(busThrough(proxy, Duration.ofSeconds(20)), () -> {
                proxy.pause();
                sweepWaits.countDown();
            }, () -> { });
            Runs sweeper = runs(sweeperBus, config(schema, "sweeper", workerOptions().build()));
            CompletableFuture<SweepResult> sweep = CompletableFuture.supplyAsync(sweeper::sweepOnce);
            assertThat(sweepWaits.await(20, TimeUnit.SECONDS)).isTrue();

            release.countDown();

            Wait.until("done while the sweep waits on Redis", Duration.ofSeconds(5),
                    () -> worker.get(id).orElseThrow().status() == RunStatus.DONE);
            assertThat(sweep).isNotDone();
            proxy.resume();
            SweepResult r = sweep.get(30, TimeUnit.SECONDS);
            assertThat(r.examined()).isEqualTo(1);
            assertThat(r.republished()).isZero();
            assertThat(republishedOf(id)).isZero();
            assertThat(redis.redis().xlen(stream())).isEqualTo(1);
        } finally {
            release.countDown();
        }
    }

    /**
     * A failed attempt's retry waits in the delay set for longer than the sweep threshold: the sweeper leaves the
     * run alone (its trigger is acknowledged, so Redis would call it lost) until the retry is overdue.
     */
    @Test
    void runWaitingForARetryLongerThanTheThreshold_isNotRepublished() {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().build())
                .retryPolicy(RetryPolicy.fixed(Duration.ofSeconds(3))).build());
        AtomicInteger executions = new AtomicInteger();
        runs.startWorker(run -> {
            executions.incrementAndGet();
            if (run.attempt() == 1) {
                throw new IllegalStateException("first attempt fails");
            }
            return ECHO.execute(run);
        });
        runs.startSweeper();
        UUID id = runs.submit(NewRun.of("s", "u", "retried")).runId();

        Run done = Wait.until("done", WAIT, () -> runs.get(id).orElseThrow(), r -> r.status() == RunStatus.DONE);

        assertThat(done.attempts()).isEqualTo(2);
        assertThat(executions.get()).isEqualTo(2);
        assertThat(republishedOf(id)).isZero();
    }

    /** Once the retry the bus was to make is overdue by the threshold (Redis lost it), the run is republished. */
    @Test
    void runWhoseRetryIsOverdue_isRepublished() {
        Runs runs = runs(bus(), config(schema, "w1", workerOptions().build()));
        UUID id = lostRun("waiting", Duration.ofMinutes(5));
        execute("UPDATE " + schema + ".runs SET status = 'running', attempts = 1, stream_id = '1-0',"
                + " next_attempt_at = now() + interval '1 minute' WHERE id = '" + id + "'");
        age(id);

        assertThat(runs.sweepOnce().examined()).isZero();

        execute("UPDATE " + schema + ".runs SET next_attempt_at = now() - interval '1 minute',"
                + " updated_at = now() - interval '2 minutes' WHERE id = '" + id + "'");
        assertThat(runs.sweepOnce().republished()).isEqualTo(1);
        assertThat(runs.get(id).orElseThrow().nextAttemptAt()).isEmpty();
    }

    /**
     * The retry's copy was moved into the stream when due but waits there unread (a backlog): the run's own entry
     * is acked, yet its trigger is live, and the sweeper leaves it alone; once the group has read past the copy
     * without the run moving, it is republished.
     */
    @Test
    void runWhoseRetryCopyWaitsUnreadInTheStream_isNotRepublished() {
        Runs runs = runs(bus(), config(schema, "w1", workerOptions().build()));
        redis.redis().xgroupCreate(io.lettuce.core.XReadArgs.StreamOffset.from(stream(), "0"), "run-workers",
                io.lettuce.core.XGroupCreateArgs.Builder.mkstream(true));
        UUID id = lostRun("waiting", Duration.ofMinutes(5));
        execute("UPDATE " + schema + ".runs SET status = 'running', attempts = 1, stream_id = '1-0',"
                + " next_attempt_at = now() - interval '1 minute' WHERE id = '" + id + "'");
        age(id);
        redis.redis().xadd(stream(), "id", "copy", "type", "run", "payload", "x"); // the copy, moved just now

        assertThat(runs.sweepOnce().republished()).isZero();

        redis.redis().xreadgroup(io.lettuce.core.Consumer.from("run-workers", "w0"),
                io.lettuce.core.XReadArgs.StreamOffset.lastConsumed(stream()));
        assertThat(runs.sweepOnce().republished()).as("read past the copy, the run still not moving").isEqualTo(1);
    }

    /** The sweep holds its lock on the one connection it works on: a pool of one is enough. */
    @Test
    void aSweepNeedsOnlyOneConnection() {
        com.zaxxer.hikari.HikariConfig hc = new com.zaxxer.hikari.HikariConfig();
        hc.setJdbcUrl(TestDatabase.URL);
        hc.setMaximumPoolSize(1);
        hc.setConnectionTimeout(2000);
        com.zaxxer.hikari.HikariDataSource one = new com.zaxxer.hikari.HikariDataSource(hc);
        closeables.add(one);
        Runs runs = Runs.create(bus(), one, config(schema, "w1", workerOptions().build()));
        closeables.add(runs);
        UUID lost = lostRun("lost", Duration.ofMinutes(1));

        assertThat(runs.sweepOnce().republished()).isEqualTo(1);
        assertThat(republishedOf(lost)).isEqualTo(1);
    }

    /** Issue 10, defect 9: a sweep that throws an Error is reported, and the next sweeps still run. */
    @Test
    void sweepThrowingAnErrorOnce_keepsSweepingAfterwards() {
        var failingOnce = Faults.throwingOnceOn(TestDatabase.pool(), "runbus-runs-sweeper",
                () -> new Error("the first sweep breaks"));
        Runs runs = Runs.create(bus(), failingOnce, config(schema, "w1", workerOptions().build()));
        closeables.add(runs);
        UUID lost = lostRun("lost", Duration.ofMinutes(1));

        runs.startSweeper();

        Wait.until("republished by a later sweep", WAIT, () -> redis.redis().xlen(stream()) == 1);
        assertThat(republishedOf(lost)).isEqualTo(1);
    }

    /**
     * Issue 10, defect 12: with at least {@code sweepBatch} long-running live runs older than a lost one, the
     * sweeper pages past them and republishes the lost run.
     */
    @Test
    void moreLiveRunsThanASweepBatch_aNewerLostRunIsStillRepublished() {
        Bus bus = bus();
        Runs runs = runs(bus, configBuilder(schema, "w1", workerOptions().concurrency(4).build()).sweepBatch(3)
                .build());
        CountDownLatch release = new CountDownLatch(1);
        try {
            runs.startWorker(holdingLive(release));
            List<UUID> live = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                live.add(runs.submit(NewRun.of("s", "u", "live-" + i)).runId());
            }
            Wait.until("three running", WAIT, () -> runsIn(RunStatus.RUNNING) == 3);
            live.forEach(this::age); // older than the lost run: the oldest first would be these three, always
            UUID lost = lostRun("lost", Duration.ofSeconds(30));

            SweepResult first = runs.sweepOnce();
            SweepResult second = runs.sweepOnce();

            assertThat(first.examined() + second.examined()).isEqualTo(4);
            assertThat(first.live() + second.live()).isEqualTo(3);
            assertThat(first.republished() + second.republished()).isEqualTo(1);
            assertThat(republishedOf(lost)).isEqualTo(1);
            live.forEach(id -> assertThat(republishedOf(id)).as("republished of live run %s", id).isZero());
            Run done = Wait.until("lost run done", WAIT, () -> runs.get(lost).orElseThrow(),
                    r -> r.status() == RunStatus.DONE);
            assertThat(done.attempts()).isEqualTo(1);
        } finally {
            release.countDown();
        }
    }
}
