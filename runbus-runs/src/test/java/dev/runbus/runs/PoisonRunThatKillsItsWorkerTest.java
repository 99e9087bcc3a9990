package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.SubscribeOptions;
import dev.runbus.runs.testing.HaltingRunsWorker;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.Supervisor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A run whose handler kills its worker process fails alone: PostgreSQL counts an attempt for a run whose handler
 * starts, not for every run of the batch the worker took, and the bus counts its trigger the same way. The worker
 * runs in a child JVM ({@link HaltingRunsWorker}) started again under the same name after each death.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PoisonRunThatKillsItsWorkerTest extends RunsTestSupport {

    private static final int MAX_DELIVERIES = 3;

    /** Issue's case (c): one handler thread, reads of ten triggers. */
    @Test
    void onePoisonRunAmongAHundred_oneHandler_readsOfTen_onlyItFails_theOthersRanOnce() throws Exception {
        List<UUID> good = crashLoop(1, 10, 99);
        for (UUID id : good) {
            assertThat(attemptsOf(id)).as("attempts of good run %s (nothing ran beside the poison)", id).isEqualTo(1);
        }
    }

    /** The defaults: eight handler threads, reads of a hundred. */
    @Test
    void onePoisonRunAmongTwoHundred_defaults_onlyItFails() throws Exception {
        List<UUID> good = crashLoop(SubscribeOptions.DEFAULT_CONCURRENCY, SubscribeOptions.DEFAULT_BATCH_SIZE, 199);
        for (UUID id : good) {
            assertThat(attemptsOf(id)).as("attempts of good run %s", id).isBetween(1L, (long) MAX_DELIVERIES + 1);
        }
    }

    /** Returns the good runs, each checked done with its replies once. */
    private List<UUID> crashLoop(int concurrency, int batchSize, int goodRuns) throws Exception {
        Runs submitter = runs(bus(), "submitter", workerOptions().build());
        UUID poison = submitter.submit(NewRun.of("s", "u", "poison")).runId();
        List<UUID> good = new ArrayList<>();
        for (int i = 0; i < goodRuns; i++) {
            good.add(submitter.submit(NewRun.of("s", "u", "good-" + i)).runId());
        }
        Supervisor.Run run = Supervisor.untilDone(() -> ChildJvm.start(HaltingRunsWorker.class, redis.uri(), prefix,
                TestDatabase.URL, schema, "worker-1", Integer.toString(concurrency), Integer.toString(batchSize),
                Integer.toString(MAX_DELIVERIES)), closeables::add, () -> unfinished() == 0, MAX_DELIVERIES + 2,
                Duration.ofSeconds(90));
        int deaths = run.deaths();
        long poisonStarts = run.count("STARTED poison");
        assertThat(statusOf(poison)).isEqualTo(RunStatus.FAILED);
        assertThat(goodDone()).as("good runs done").isEqualTo(good.size());
        for (UUID id : good) {
            assertThat(replyRows(id)).as("reply rows of %s", id).isEqualTo(2);
        }
        // maxDeliveries starts, then one alone; one more when its first start's record had not left the process
        assertThat(poisonStarts).as("starts of the poison run").isBetween((long) MAX_DELIVERIES + 1,
                (long) MAX_DELIVERIES + 2);
        assertThat(attemptsOf(poison)).as("attempts of the poison run").isLessThanOrEqualTo(MAX_DELIVERIES + 1);
        System.out.println("poison run that kills its worker (concurrency " + concurrency + ", batch " + batchSize
                + "): " + deaths + " deaths, " + poisonStarts + " starts of the poison run, attempts " + attemptsOf(poison)
                + "; " + good.size() + " good runs done, attempts " + good.stream().mapToLong(this::attemptsOf)
                .summaryStatistics());
        return good;
    }

    private RunStatus statusOf(UUID run) {
        String s = TestDatabase.string("SELECT status FROM " + schema + ".runs WHERE id = '" + run + "'");
        return RunStatus.fromSql(s);
    }

    private long unfinished() {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE status IN ('"
                + RunStatus.PENDING.sql() + "', '" + RunStatus.RUNNING.sql() + "')");
    }

    private long goodDone() {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE status = '"
                + RunStatus.DONE.sql() + "' AND input LIKE 'good-%'");
    }

    private long attemptsOf(UUID run) {
        return TestDatabase.count("SELECT attempts FROM " + schema + ".runs WHERE id = '" + run + "'");
    }
}
