package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.RetryPolicy;
import dev.runbus.runs.internal.worker.CrashPoints.Point;
import dev.runbus.runs.testing.RunsNode;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Runs#cancel} of a running run: the handler is told (flag, callback, throwing check) and its run ends
 * cancelled, never retried, its replies kept; a handler that ignores it is interrupted after the grace period, and
 * the thread's next run is not; a run between attempts is cancelled at once and its retry never runs; a worker that
 * dies while its run is cancelling leaves the run to whoever takes its trigger over, which cancels it without running
 * it (nor does the sweeper or a replay revive it); a cancel racing a completion ends in one state; in per-user order
 * the user's next run waits for the cancelled one to end, then runs.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class CancelRunningRunTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(60);

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    private static long percentile(List<Long> sorted, double p) {
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p * sorted.size()) - 1));
    }

    @Test
    void runningHandlersAreTold_andTheirRunsEndCancelledWithTheirReplies_neverRetried() throws Exception {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().concurrency(8).build())
                .cancelGrace(Duration.ofMinutes(5)).build()); // no interrupt: the handlers stop by themselves
        Map<UUID, Long> told = new ConcurrentHashMap<>();
        Map<UUID, AtomicInteger> calls = new ConcurrentHashMap<>();
        Map<UUID, CountDownLatch> started = new ConcurrentHashMap<>();
        runs.startWorker(run -> {
            calls.computeIfAbsent(run.runId(), k -> new AtomicInteger()).incrementAndGet();
            CountDownLatch toldByCallback = new CountDownLatch(1);
            run.onCancel(toldByCallback::countDown);
            started.computeIfAbsent(run.runId(), k -> new CountDownLatch(1)).countDown();
            if (run.input().startsWith("flag")) {
                while (!run.isCancelRequested()) {
                    Thread.onSpinWait();
                    Thread.sleep(1);
                }
                told.put(run.runId(), System.nanoTime());
                return List.of(Reply.assistant("stopped early"));
            }
            if (run.input().startsWith("callback")) {
                toldByCallback.await();
                told.put(run.runId(), System.nanoTime());
                return List.of(Reply.assistant("stopped by the callback"));
            }
            while (true) { // "throws": the check between steps
                Thread.sleep(1);
                try {
                    run.throwIfCancelRequested();
                } catch (RunCancelledException e) {
                    told.put(run.runId(), System.nanoTime());
                    throw e;
                }
            }
        });
        List<Long> latencies = new ArrayList<>();
        for (int round = 0; round < 10; round++) {
            List<UUID> ids = new ArrayList<>();
            for (String kind : List.of("flag", "callback", "throws")) {
                UUID id = runs.submit(NewRun.of("s", "u", kind + "-" + round)).runId();
                started.computeIfAbsent(id, k -> new CountDownLatch(1));
                ids.add(id);
            }
            Map<UUID, Long> asked = new ConcurrentHashMap<>();
            for (UUID id : ids) {
                assertThat(started.get(id).await(Wait.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                long before = System.nanoTime();
                assertThat(runs.cancel(id)).isEqualTo(RunStatus.CANCELLING);
                asked.put(id, before);
            }
            for (UUID id : ids) {
                Wait.until("run " + id + " cancelled", WAIT,
                        () -> runs.get(id).orElseThrow().status() == RunStatus.CANCELLED);
                latencies.add((told.get(id) - asked.get(id)) / 1_000_000);
            }
        }
        Collections.sort(latencies);
        System.out.printf("cancel asked -> handler told, %d running runs: p50 %d ms, p99 %d ms, max %d ms%n",
                latencies.size(), percentile(latencies, 0.5), percentile(latencies, 0.99),
                latencies.get(latencies.size() - 1));
        Bus bus = bus();
        Wait.until("every trigger acked", WAIT, () -> bus.inspector().groups("runs").get(0).pending() == 0);
        for (UUID id : told.keySet()) {
            Run run = runs.get(id).orElseThrow();
            assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
            assertThat(run.attempts()).as("attempts of %s", id).isEqualTo(1);
            assertThat(calls.get(id)).as("handler calls of %s", id).hasValue(1);
            if (!runs.get(id).orElseThrow().input().startsWith("throws")) {
                assertThat(runs.replies(id)).as("replies of %s, kept", id).hasSize(1);
            }
        }
        assertThat(told).hasSize(30);
        assertThat(runs.counts().cancelled()).isEqualTo(30);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE next_attempt_at IS NOT NULL"))
                .as("no retry is due").isZero();
        assertThatThrownBy(() -> runs.replay(told.keySet().iterator().next()))
                .isInstanceOf(IllegalRunTransitionException.class);
    }

    @Test
    void aCancelWhoseNotificationIsLostIsFoundByTheWorkersCheck() throws Exception {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().build())
                .cancelCheckInterval(Duration.ofMillis(300)).cancelGrace(Duration.ofMinutes(5)).build());
        CountDownLatch started = new CountDownLatch(1);
        runs.startWorker(run -> {
            started.countDown();
            while (!run.isCancelRequested()) {
                Thread.sleep(5);
            }
            return List.of(Reply.assistant("stopped"));
        });
        UUID id = runs.submit(NewRun.of("s", "u", "unnotified")).runId();
        assertThat(started.await(Wait.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        // The cancel's row change without its NOTIFY: as if the notification was lost with a broken connection.
        execute("UPDATE " + schema + ".runs SET cancel_requested_at = now() WHERE id = '" + id + "'");
        Wait.until("cancelled", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.CANCELLED);
        assertThat(runs.replies(id)).hasSize(1);
    }

    @Test
    void aHandlerThatIgnoresTheCancelIsInterruptedAfterTheGrace_andTheThreadsNextRunIsNot() throws Exception {
        Duration grace = Duration.ofSeconds(1);
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().concurrency(1).build())
                .cancelGrace(grace).build()); // one handler thread: the next run takes the interrupted thread
        AtomicLong interruptedAt = new AtomicLong();
        CountDownLatch started = new CountDownLatch(1);
        runs.startWorker(run -> {
            if (run.input().equals("stubborn")) {
                started.countDown();
                try {
                    Thread.sleep(TimeUnit.MINUTES.toMillis(10)); // never looks at the cancel
                } catch (InterruptedException e) {
                    interruptedAt.set(System.nanoTime());
                    throw e;
                }
            }
            Thread.sleep(200); // an interrupt left on the thread would end this run with an error
            return List.of(Reply.assistant("next ran"));
        });
        UUID stubborn = runs.submit(NewRun.of("s", "u", "stubborn")).runId();
        assertThat(started.await(Wait.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        long asked = System.nanoTime();
        assertThat(runs.cancel(stubborn)).isEqualTo(RunStatus.CANCELLING);
        assertThat(runs.get(stubborn).orElseThrow().status()).isEqualTo(RunStatus.CANCELLING);
        Wait.until("cancelled", WAIT, () -> runs.get(stubborn).orElseThrow().status() == RunStatus.CANCELLED);
        long tookMillis = (interruptedAt.get() - asked) / 1_000_000;
        System.out.printf("cancel asked -> ignoring handler interrupted: %d ms (grace %d ms)%n", tookMillis,
                grace.toMillis());
        assertThat(tookMillis).as("interrupted after the grace, not before").isGreaterThanOrEqualTo(grace.toMillis());
        assertThat(runs.get(stubborn).orElseThrow().error()).hasValueSatisfying(
                e -> assertThat(e).contains("InterruptedException"));
        UUID next = runs.submit(NewRun.of("s", "u", "next")).runId();
        Wait.until("the next run done", WAIT, () -> runs.get(next).orElseThrow().status() == RunStatus.DONE);
        assertThat(runs.get(next).orElseThrow().attempts()).as("its first attempt, not interrupted").isEqualTo(1);
    }

    /** A callback that never returns holds up neither the interrupt of its own handler nor another run's cancel. */
    @Test
    void aCancelCallbackThatBlocks_holdsUpNoInterrupt() throws Exception {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().concurrency(2).build())
                .cancelGrace(Duration.ofMillis(500)).build());
        CountDownLatch never = new CountDownLatch(1);
        Map<String, CountDownLatch> started = new ConcurrentHashMap<>();
        started.put("blocks", new CountDownLatch(1));
        started.put("other", new CountDownLatch(1));
        try {
            runs.startWorker(run -> {
                if (run.input().equals("blocks")) {
                    run.onCancel(() -> {
                        try {
                            never.await(); // a callback that never returns
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                }
                started.get(run.input()).countDown();
                Thread.sleep(TimeUnit.MINUTES.toMillis(10)); // ignores the cancel: interrupted after the grace
                return List.of();
            });
            UUID blocks = runs.submit(NewRun.of("s", "u", "blocks")).runId();
            UUID other = runs.submit(NewRun.of("s", "v", "other")).runId();
            for (CountDownLatch l : started.values()) {
                assertThat(l.await(Wait.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            }
            assertThat(runs.cancel(blocks)).isEqualTo(RunStatus.CANCELLING);
            assertThat(runs.cancel(other)).isEqualTo(RunStatus.CANCELLING);
            Wait.until("both interrupted and cancelled", WAIT, () -> runs.get(blocks).orElseThrow().status()
                    == RunStatus.CANCELLED && runs.get(other).orElseThrow().status() == RunStatus.CANCELLED);
        } finally {
            never.countDown();
        }
    }

    @Test
    void aRunBetweenAttemptsIsCancelledAtOnce_andItsRetryNeverRuns() throws Exception {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().maxDeliveries(3).build())
                .retryPolicy(RetryPolicy.fixed(Duration.ofSeconds(2))).build());
        AtomicInteger calls = new AtomicInteger();
        runs.startWorker(run -> {
            calls.incrementAndGet();
            throw new IllegalStateException("first attempt fails");
        });
        UUID id = runs.submit(NewRun.of("s", "u", "retried")).runId();
        Wait.until("its retry due", WAIT, () -> runs.get(id).orElseThrow().nextAttemptAt().isPresent());
        assertThat(runs.cancel(id)).isEqualTo(RunStatus.CANCELLED);
        Bus bus = bus();
        Wait.until("its retry's trigger acked", WAIT, () -> bus.inspector().groups("runs").get(0).pending() == 0
                && bus.scheduled().count("runs") == 0);
        assertThat(calls).hasValue(1);
        Run run = runs.get(id).orElseThrow();
        assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(run.attempts()).isEqualTo(1);
        assertThat(run.nextAttemptAt()).isEmpty();
    }

    @Test
    @org.junit.jupiter.api.Tag("chaos")
    void aWorkerThatDiesWhileItsRunIsCancelling_leavesItCancelledByTheTakeover_neverRunAgain() throws Exception {
        UUID id;
        Runs submitter = runs(bus(), "w1", workerOptions().build());
        id = submitter.submit(NewRun.of("s-child", "u-child", "doomed")).runId();
        try (ChildJvm child = ChildJvm.start(RunsNode.class, redis.uri(), prefix, TestDatabase.URL, schema,
                Point.AFTER_HANDLER_BEFORE_COMMIT.name(), "worker")) {
            child.awaitLine("AT AFTER_HANDLER_BEFORE_COMMIT", WAIT); // its handler returned; nothing committed
            assertThat(submitter.cancel(id)).isEqualTo(RunStatus.CANCELLING);
            child.kill();
        }
        AtomicInteger calls = new AtomicInteger();
        Runs taker = runs(bus(), "w2", workerOptions().build());
        taker.startWorker(run -> {
            calls.incrementAndGet();
            return List.of(Reply.assistant("must not run"));
        });
        Bus bus = bus();
        Wait.until("cancelled by the takeover", WAIT,
                () -> taker.get(id).orElseThrow().status() == RunStatus.CANCELLED);
        Wait.until("the trigger acked", WAIT, () -> bus.inspector().groups("runs").get(0).pending() == 0);
        assertThat(calls).hasValue(0);
        assertThat(taker.get(id).orElseThrow().attempts()).as("the dead worker's attempt only").isEqualTo(1);
        assertThat(replyRows(id)).isZero();
        age(id);
        assertThat(taker.sweepOnce().republished()).isZero();
        assertThatThrownBy(() -> taker.replay(id)).isInstanceOf(IllegalRunTransitionException.class);
        assertThat(calls).hasValue(0);
    }

    @Test
    void aCancelRacingACompletionEndsInOneState_theOneItsCallerWasTold() throws Exception {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().concurrency(8).build())
                .cancelGrace(Duration.ofMinutes(5)).build());
        Map<String, CountDownLatch> release = new ConcurrentHashMap<>();
        Map<String, CountDownLatch> started = new ConcurrentHashMap<>();
        Map<UUID, AtomicInteger> calls = new ConcurrentHashMap<>();
        runs.startWorker(run -> {
            calls.computeIfAbsent(run.runId(), k -> new AtomicInteger()).incrementAndGet();
            started.get(run.input()).countDown();
            release.get(run.input()).await();
            return List.of(Reply.assistant("finished"));
        });
        int n = 60;
        Map<UUID, Object> answers = new ConcurrentHashMap<>();
        for (int i = 0; i < n; i++) {
            String input = "race-" + i;
            release.put(input, new CountDownLatch(1));
            started.put(input, new CountDownLatch(1));
            UUID id = runs.submit(NewRun.of("s", "u", input)).runId();
            assertThat(started.get(input).await(Wait.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            Thread canceller = new Thread(() -> {
                try {
                    answers.put(id, runs.cancel(id));
                } catch (IllegalRunTransitionException e) {
                    answers.put(id, e);
                }
            });
            release.get(input).countDown(); // the handler returns as the cancel is asked for
            canceller.start();
            canceller.join();
        }
        Bus bus = bus();
        Wait.until("every trigger acked", WAIT, () -> bus.inspector().groups("runs").get(0).pending() == 0);
        int cancelled = 0;
        for (Map.Entry<UUID, Object> e : answers.entrySet()) {
            Run run = runs.get(e.getKey()).orElseThrow();
            if (e.getValue() instanceof IllegalRunTransitionException) {
                assertThat(run.status()).as("refused cancel of %s", e.getKey()).isEqualTo(RunStatus.DONE);
            } else {
                assertThat(run.status()).as("accepted cancel of %s", e.getKey()).isEqualTo(RunStatus.CANCELLED);
                cancelled++;
            }
            assertThat(calls.get(e.getKey())).hasValue(1);
            assertThat(runs.replies(e.getKey())).as("the one execution's replies").hasSize(1);
        }
        assertThat(answers).hasSize(n);
        System.out.printf("cancel racing completion: %d cancelled, %d done%n", cancelled, n - cancelled);
        assertThat(runs.counts().done() + runs.counts().cancelled()).isEqualTo(n);
    }

    @Test
    void inPerUserOrderTheNextRunWaitsForTheCancelledOne_thenRuns() throws Exception {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().build()).ordered(true)
                .cancelGrace(Duration.ofMillis(500)).build());
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch firstStarted = new CountDownLatch(1);
        runs.startWorker(run -> {
            order.add(run.input());
            if (run.input().equals("first")) {
                firstStarted.countDown();
                Thread.sleep(TimeUnit.MINUTES.toMillis(10)); // interrupted after the grace
            }
            return List.of(Reply.assistant("ok"));
        });
        UUID first = runs.submit(NewRun.of("s", "u", "first")).runId();
        UUID second = runs.submit(NewRun.of("s", "u", "second")).runId();
        assertThat(firstStarted.await(Wait.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(runs.cancel(first)).isEqualTo(RunStatus.CANCELLING);
        Wait.until("the second run done", WAIT, () -> runs.get(second).orElseThrow().status() == RunStatus.DONE);
        assertThat(runs.get(first).orElseThrow().status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(order).containsExactly("first", "second");
        assertThat(orderViolations(schema)).isZero();
    }
}
