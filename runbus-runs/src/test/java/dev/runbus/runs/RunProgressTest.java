package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A handler's progress reports ({@link RunContext#progress}): the latest is visible in {@link Run#progress()} while
 * the run runs and after it ends, and reports are coalesced to about one row write a second, however many there are.
 * Writes are counted by a trigger on the column, in the test's own schema.
 */
class RunProgressTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    private void countProgressWrites() {
        execute("CREATE TABLE " + schema + ".progress_writes (n bigint NOT NULL)");
        execute("INSERT INTO " + schema + ".progress_writes VALUES (0)");
        execute("CREATE FUNCTION " + schema + ".count_progress() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " UPDATE " + schema + ".progress_writes SET n = n + 1; RETURN NULL; END $$");
        execute("CREATE TRIGGER count_progress AFTER UPDATE OF progress_percent ON " + schema
                + ".runs FOR EACH ROW EXECUTE FUNCTION " + schema + ".count_progress()");
    }

    @Test
    void theLatestReportIsVisibleWhileTheRunRunsAndAfter_andReportsAreCoalesced() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        countProgressWrites();
        CountDownLatch reported = new CountDownLatch(1);
        CountDownLatch mayEnd = new CountDownLatch(1);
        AtomicLong reportingMillis = new AtomicLong();
        AtomicReference<Throwable> refused = new AtomicReference<>();
        runs.startWorker(run -> {
            long start = System.nanoTime();
            for (int step = 1; step <= 1_000; step++) {
                run.progress(step / 10, "step " + step);
                if (step % 100 == 0) {
                    Thread.sleep(150); // about 1.5 s of reporting in all: two or three flushes
                }
            }
            reportingMillis.set((System.nanoTime() - start) / 1_000_000);
            try {
                run.progress(101, "too far");
            } catch (IllegalArgumentException e) {
                refused.set(e);
            }
            reported.countDown();
            mayEnd.await();
            return List.of(Reply.assistant("ok"));
        });
        UUID id = runs.submit(NewRun.of("s", "u", "long work")).runId();
        try {
            Wait.until("the last report written while it runs", WAIT, () -> runs.get(id).orElseThrow().progress()
                    .filter(p -> p.percent() == 100 && "step 1000".equals(p.details())).isPresent());
            assertThat(runs.get(id).orElseThrow().status()).isEqualTo(RunStatus.RUNNING);
        } finally {
            mayEnd.countDown();
        }
        Wait.until("done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        assertThat(runs.get(id).orElseThrow().progress()).as("kept after the run ends")
                .hasValueSatisfying(p -> assertThat(p.percent()).isEqualTo(100));
        assertThat(refused.get()).as("a percent outside 0 to 100").isInstanceOf(IllegalArgumentException.class);
        long writes = TestDatabase.count("SELECT n FROM " + schema + ".progress_writes");
        long mostWrites = reportingMillis.get() / 1_000 + 2; // one a second, and the turns at either end
        assertThat(writes).as("1,000 reports over %d ms", reportingMillis.get()).isBetween(1L, mostWrites);
    }

    @Test
    void aContextMadeByHandReportsNowhere() {
        RunContext context = new RunContext(UUID.randomUUID(), "k", "s", "u", "in", 1, null);
        context.progress(50, "fine"); // no worker: nothing to write, nothing thrown
        assertThat(context.progress()).isSameAs(RunProgress.NONE);
        Runs runs = runs(bus(), "w1", workerOptions().build());
        UUID id = runs.submit(NewRun.of("s", "u", "quick")).runId();
        runs.startWorker(ECHO);
        Wait.until("done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        assertThat(runs.get(id).orElseThrow().progress()).as("no report, no progress").isEmpty();
    }
}
