package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.runs.internal.worker.Triggers;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** How the worker settles a run's trigger and what it stores, whatever its handler does. */
class RunWorkerTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    /** A failure whose first description throws, as a third-party exception's getMessage can. */
    static final class IllDescribedFailure extends RuntimeException {
        private final AtomicBoolean described = new AtomicBoolean();

        @Override
        public String getMessage() {
            if (described.compareAndSet(false, true)) {
                throw new IllegalStateException("cannot describe myself the first time");
            }
            return "ill-described";
        }
    }

    /**
     * Issue 10, defect 8: recording the failure throws something other than an SQLException; the trigger is
     * still settled (here dead-lettered at once) instead of the batch call waiting forever.
     */
    @Test
    void failureWhoseRecordingThrows_stillSettlesTheTrigger() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().maxDeliveries(1).build());
        runs.startWorker(run -> {
            throw new IllDescribedFailure();
        });
        UUID id = runs.submit(NewRun.of("s", "u", "x")).runId();

        Run failed = Wait.until("failed", Duration.ofSeconds(15), () -> runs.get(id).orElseThrow(),
                r -> r.status() == RunStatus.FAILED);

        assertThat(failed.attempts()).isEqualTo(1);
        assertThat(failed.error()).get().asString().contains(IllDescribedFailure.class.getName());
        assertThat(bus.deadLetters().count("runs")).isEqualTo(1);
        Wait.until("nothing pending", WAIT, () -> bus.inspector().groups("runs").get(0).pending() == 0);
    }

    /**
     * Guard 2 beyond the unique constraint: two executions of one run return 2 and 3 replies; the stored
     * replies are exactly the set of the execution that completed first, never the first's plus the
     * other's third. Both orders of completion.
     */
    @ParameterizedTest(name = "the execution with {0} replies completes first")
    @ValueSource(ints = {2, 3})
    void twoExecutionsWithTwoAndThreeReplies_storeExactlyOneExecutionsSet(int firstCount) throws Exception {
        Bus bus = bus();
        Runs a = runs(bus, "worker-a", workerOptions().build());
        Runs b = runs(bus, "worker-b", workerOptions().build());
        UUID id = a.submit(NewRun.of("s", "u", "twice")).runId();
        bus.publisher().publish("runs", Triggers.of(id)); // a duplicate trigger, as a republish makes
        CountDownLatch bothRunning = new CountDownLatch(2);
        AtomicInteger executions = new AtomicInteger();
        RunHandler handler = run -> {
            boolean first = executions.incrementAndGet() == 1;
            bothRunning.countDown();
            assertThat(bothRunning.await(20, TimeUnit.SECONDS)).isTrue();
            int count = first ? firstCount : 5 - firstCount;
            if (!first) { // the other one completes first
                Wait.until("the other execution completed", WAIT,
                        () -> a.get(id).orElseThrow().status() == RunStatus.DONE);
            }
            List<Reply> replies = new ArrayList<>();
            for (int i = 1; i <= count; i++) {
                replies.add(Reply.assistant((first ? "first:" : "second:") + i));
            }
            return replies;
        };
        a.startWorker(handler);
        b.startWorker(handler);

        Wait.until("both triggers acked", WAIT, () -> bus.inspector().groups("runs").get(0).pending() == 0
                && executions.get() == 2);
        Run done = a.get(id).orElseThrow();
        assertThat(done.status()).isEqualTo(RunStatus.DONE);
        assertThat(done.attempts()).isEqualTo(2);
        List<String> expected = new ArrayList<>();
        for (int i = 1; i <= firstCount; i++) {
            expected.add("first:" + i);
        }
        assertThat(a.replies(id)).extracting(StoredReply::content).containsExactlyElementsOf(expected);
        assertThat(replyRows(id)).isEqualTo(firstCount);
    }
}
