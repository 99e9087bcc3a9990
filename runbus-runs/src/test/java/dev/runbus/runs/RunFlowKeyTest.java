package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Runs with a flow key ({@link NewRun#withFlowKey}, docs/flow-control.md), a priority and a sub-key: the trigger carries it when the workers'
 * options set flow control, so that a worker with a flow cap runs one tenant's runs within it; the key is kept with the run, so that the sweeper's
 * republished trigger carries it too; and the sweeper leaves alone a run whose trigger waits outside the stream for
 * its key's slot, where it cannot see it in the stream.
 */
class RunFlowKeyTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    /**
     * Starts a worker on {@code runs} whose handler records each run's input in {@code started} and holds run
     * {@code a-0} until {@code release}; submits a-0 with flow key a and returns its id once it runs (holding a's
     * only slot under a cap of 1).
     */
    private static UUID a0RunningUntil(Runs runs, CountDownLatch release, List<String> started) {
        runs.startWorker(run -> {
            started.add(run.input());
            if (run.input().equals("a-0")) {
                release.await();
            }
            return List.of(Reply.assistant("ok"));
        });
        UUID id = runs.submit(NewRun.of("s", "u", "a-0").withFlowKey("a")).runId();
        Wait.until("a-0 running", WAIT, () -> started.contains("a-0"));
        return id;
    }

    /** The tenant of a run's input, {@code <tenant>-<n>}. */
    private static String tenantOf(RunContext run) {
        return run.input().substring(0, run.input().indexOf('-'));
    }

    @Test
    void aTenantsRunsRunWithinItsCap_andAnotherTenantIsNotHeldBack() {
        Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
        AtomicInteger mostOfA = new AtomicInteger();
        List<String> finished = new CopyOnWriteArrayList<>();
        Runs runs = runs(bus(), "w1", workerOptions().flowCap(1).build());
        runs.startWorker(run -> {
            AtomicInteger mine = running.computeIfAbsent(tenantOf(run), t -> new AtomicInteger());
            int now = mine.incrementAndGet();
            if (tenantOf(run).equals("a")) {
                mostOfA.accumulateAndGet(now, Math::max);
            }
            try {
                Thread.sleep(100); // a run's work: lets a's runs overlap if the cap let them
            } finally {
                mine.decrementAndGet();
                finished.add(run.input());
            }
            return List.of(Reply.assistant("ok"));
        });
        List<UUID> ids = new ArrayList<>();
        for (int n = 0; n < 5; n++) {
            ids.add(runs.submit(NewRun.of("s", "u", "a-" + n).withFlowKey("a")).runId());
        }
        ids.add(runs.submit(NewRun.of("s", "u", "b-0").withFlowKey("b")).runId());

        Wait.until("six runs done", WAIT, () -> ids.stream()
                .allMatch(id -> runs.get(id).orElseThrow().status() == RunStatus.DONE));
        assertThat(mostOfA.get()).as("runs of tenant a at once").isEqualTo(1);
        assertThat(finished).as("each run once").hasSize(6).doesNotHaveDuplicates();
        assertThat(finished.indexOf("b-0")).as("b's run not behind a's five, in %s", finished).isLessThan(5);
        for (UUID id : ids) {
            assertThat(runs.get(id).orElseThrow().attempts()).as("waiting is not an attempt").isEqualTo(1);
        }
    }

    /**
     * A run whose trigger waits outside the stream for its key's slot (its tenant's other run holds the only one) is
     * not lost: a sweep past the threshold leaves it alone instead of publishing it again.
     */
    @Test
    void theSweeperLeavesARunWhoseTriggerWaitsForItsKeysSlot() {
        CountDownLatch release = new CountDownLatch(1);
        List<String> started = new CopyOnWriteArrayList<>();
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().flowCap(1).build());
        UUID first = a0RunningUntil(runs, release, started);
        UUID second = runs.submit(NewRun.of("s", "u", "a-1").withFlowKey("a")).runId();
        assertThat(bus.inspector().flowWaiting("runs", "a")).as("a-1's trigger waits for a's slot").isEqualTo(1);

        age(second);
        runs.sweepOnce();
        assertThat(republishedOf(second)).as("not taken for lost").isZero();

        release.countDown();
        Wait.until("both done", WAIT, () -> runs.get(first).orElseThrow().status() == RunStatus.DONE
                && runs.get(second).orElseThrow().status() == RunStatus.DONE);
        assertThat(started).containsExactly("a-0", "a-1");
    }

    /**
     * A flow-keyed trigger gets its stream id when it is let in, long after its run was written: one waiting in the
     * stream, undelivered (no worker reads), is not taken for lost though the group was delivered entries written
     * long after its run.
     */
    @Test
    void aFlowKeyedTriggerUndeliveredInTheStream_isNotTakenForLost() {
        Bus bus = bus();
        Runs first = runs(bus, "w1", workerOptions().flowCap(5).build());
        first.startWorker(ECHO);
        UUID filler = first.submit(NewRun.of("s", "u", "f-0").withFlowKey("f")).runId();
        Wait.until("the filler done", WAIT, () -> first.get(filler).orElseThrow().status() == RunStatus.DONE);
        first.close(); // nobody reads now; the topic's flow control stays configured

        Runs runs = runs(bus, "w1", workerOptions().flowCap(5).build());
        UUID id = runs.submit(NewRun.of("s", "u", "a-0").withFlowKey("a")).runId();
        assertThat(bus.inspector().undeliveredMessageIds("runs", RunsConfig.DEFAULT_GROUP, 0, 10).ids())
                .as("let in at once, undelivered").containsExactly(id.toString());
        age(id); // written a minute before the group's last delivery, as a trigger that waited for its key's slot
        assertThat(runs.sweepOnce().republished()).as("not taken for lost").isZero();

        runs.startWorker(ECHO);
        Wait.until("done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        assertThat(runs.get(id).orElseThrow().attempts()).isEqualTo(1);
    }

    /**
     * A lost trigger of a key that always has others waiting is found: the sweeper looks for the run's own trigger
     * among its key's waiting ones, not for any.
     */
    @Test
    void aLostTriggerOfAKeyWithOthersWaiting_isPublishedAgain() {
        CountDownLatch release = new CountDownLatch(1);
        List<String> started = new CopyOnWriteArrayList<>();
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().flowCap(1).build());
        a0RunningUntil(runs, release, started);
        UUID waiting = runs.submit(NewRun.of("s", "u", "a-1").withFlowKey("a")).runId();
        UUID lost = lostRun("a-2", Duration.ofMinutes(1));
        execute("UPDATE " + schema + ".runs SET flow_key = 'a' WHERE id = '" + lost + "'");
        age(waiting);

        runs.sweepOnce();
        assertThat(republishedOf(lost)).as("its trigger is nowhere: published again").isEqualTo(1);
        assertThat(republishedOf(waiting)).as("its trigger waits for a's slot").isZero();
        assertThat(bus.inspector().flowWaiting("runs", "a")).as("a-1 and a-2 wait now").isEqualTo(2);
        release.countDown();
        Wait.until("all done", WAIT, () -> runs.get(lost).orElseThrow().status() == RunStatus.DONE
                && runs.get(waiting).orElseThrow().status() == RunStatus.DONE);
    }

    /** A run committed whose trigger was lost is published again with its flow key: it waits for its key's slot. */
    @Test
    void aLostRunsTriggerIsPublishedAgainWithItsFlowKey() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().flowCap(1).build());
        UUID id = lostRun("a-0", Duration.ofMinutes(1));
        execute("UPDATE " + schema + ".runs SET flow_key = 'a' WHERE id = '" + id + "'");
        // The worker's group configured no cap yet (no worker started): a trigger with a flow key waits for one.
        assertThat(runs.sweepOnce().republished()).isEqualTo(1);
        assertThat(bus.inspector().flowWaiting("runs", "a")).as("republished with its flow key").isEqualTo(1);

        List<String> ran = new CopyOnWriteArrayList<>();
        runs.startWorker(run -> {
            ran.add(run.input());
            return List.of(Reply.assistant("ok"));
        });
        Wait.until("done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        assertThat(ran).containsExactly("a-0");
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE flow_key = 'a'")).isEqualTo(1);
    }

    /**
     * A tenant's waiting runs start by priority (docs/flow-control.md, "Priorities"), and a lost run's trigger
     * published again by the sweeper keeps its run's priority: behind a-0 in a's one slot, the lost a-lost
     * (priority 9, stored) goes before a-low (0) and a-default (4), submitted before the sweep.
     */
    @Test
    void aTenantsWaitingRunsStartByPriority_andASweptRunKeepsItsPriority() {
        CountDownLatch release = new CountDownLatch(1);
        List<String> started = new CopyOnWriteArrayList<>();
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().flowCap(1).build());
        UUID lost = lostRun("a-lost", Duration.ofMinutes(1));
        execute("UPDATE " + schema + ".runs SET flow_key = 'a', priority = 9 WHERE id = '" + lost + "'");
        a0RunningUntil(runs, release, started);
        UUID low = runs.submit(NewRun.of("s", "u", "a-low").withFlowKey("a").withPriority(0)).runId();
        UUID middle = runs.submit(NewRun.of("s", "u", "a-default").withFlowKey("a")).runId();
        UUID high = runs.submit(NewRun.of("s", "u", "a-high").withFlowKey("a").withPriority(9)).runId();
        Wait.until("three of a's runs waiting for its slot", WAIT,
                () -> bus.inspector().flowWaiting("runs", "a") == 3);
        assertThat(runs.sweepOnce().republished()).as("the lost run, not the waiting ones").isEqualTo(1);

        release.countDown();
        Wait.until("all done", WAIT, () -> List.of(lost, low, middle, high).stream()
                .allMatch(id -> runs.get(id).orElseThrow().status() == RunStatus.DONE));
        assertThat(started).containsExactly("a-0", "a-high", "a-lost", "a-default", "a-low");
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE priority = 9")).isEqualTo(2);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE priority IS NULL"))
                .as("the default is stored as NULL").isEqualTo(2);
    }

    /**
     * A tenant's waiting runs are shared fairly among their sub-keys (docs/flow-control.md, "Sub-keys"), and a lost
     * run's trigger published again keeps its sub-key: behind a-0 in a's one slot, conversation "big" has six runs
     * waiting when "small"'s lost run is swept and "other"'s one is submitted; each of those two starts within the
     * first round, not behind big's six as they would in order of arrival.
     */
    @Test
    void aTenantsWaitingRunsAreSharedAmongItsSubKeys_andASweptRunKeepsItsSubKey() {
        CountDownLatch release = new CountDownLatch(1);
        List<String> started = new CopyOnWriteArrayList<>();
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().flowCap(1).build());
        UUID lost = lostRun("small-lost", Duration.ofMinutes(1));
        execute("UPDATE " + schema + ".runs SET flow_key = 'a', flow_sub_key = 'small' WHERE id = '" + lost + "'");
        a0RunningUntil(runs, release, started);
        List<UUID> ids = new ArrayList<>(List.of(lost));
        for (int n = 1; n <= 6; n++) {
            ids.add(runs.submit(NewRun.of("s", "u", "big-" + n).withFlowKey("a").withFlowSubKey("big")).runId());
        }
        Wait.until("big's six runs waiting for a's slot", WAIT, () -> bus.inspector().flowWaiting("runs", "a") == 6);
        assertThat(runs.sweepOnce().republished()).as("the lost run, not the waiting ones").isEqualTo(1);
        ids.add(runs.submit(NewRun.of("s", "u", "other-1").withFlowKey("a").withFlowSubKey("other")).runId());
        Wait.until("eight of a's runs waiting", WAIT, () -> bus.inspector().flowWaiting("runs", "a") == 8);

        release.countDown();
        Wait.until("all done", WAIT, () -> ids.stream()
                .allMatch(id -> runs.get(id).orElseThrow().status() == RunStatus.DONE));
        assertThat(started).as("each run once").hasSize(9).doesNotHaveDuplicates();
        assertThat(started.subList(0, 4)).as("a-0, then one run of each conversation, in %s", started)
                .containsExactlyInAnyOrder("a-0", "big-1", "small-lost", "other-1");
        assertThat(started.subList(4, 9)).containsExactly("big-2", "big-3", "big-4", "big-5", "big-6");
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE flow_sub_key = 'big'"))
                .as("the sub-key is stored with the run").isEqualTo(6);
    }

    /**
     * Workers without flow control: a run's flow key is stored, and its trigger goes without it (one with a flow key
     * would wait for a flow-controlled subscription that never comes).
     */
    @Test
    void withoutFlowControlInTheWorkersOptions_aRunsFlowKeyIsStoredAndItRunsAsItComes() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        runs.startWorker(ECHO);
        UUID id = runs.submit(NewRun.of("s", "u", "a-0").withFlowKey("a")).runId();
        Wait.until("done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        assertThat(bus.inspector().flowWaiting("runs", "a")).isZero();
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE flow_key = 'a'")).isEqualTo(1);
    }

    /** An idempotency key reused with another flow key names another body: a conflict, not the same run. */
    @Test
    void anIdempotencyKeyReusedWithAnotherFlowKey_conflicts() {
        Runs runs = runs(bus(), "w1", workerOptions().flowCap(1).build());
        UUID id = runs.submit(NewRun.of("s", "u", "x").withKey("k-1").withFlowKey("a")).runId();
        assertThat(runs.submit(NewRun.of("s", "u", "x").withKey("k-1").withFlowKey("a")).runId()).isEqualTo(id);
        assertThatThrownBy(() -> runs.submit(NewRun.of("s", "u", "x").withKey("k-1").withFlowKey("b")))
                .isInstanceOf(IdempotencyConflictException.class);
        assertThatThrownBy(() -> runs.submit(NewRun.of("s", "u", "x").withKey("k-1")))
                .isInstanceOf(IdempotencyConflictException.class);
        assertThatThrownBy(() -> runs.submit(NewRun.of("s", "u", "x").withKey("k-1").withFlowKey("a")
                .withPriority(9))).as("another priority").isInstanceOf(IdempotencyConflictException.class);
        assertThatThrownBy(() -> runs.submit(NewRun.of("s", "u", "x").withKey("k-1").withFlowKey("a")
                .withFlowSubKey("c"))).as("another sub-key").isInstanceOf(IdempotencyConflictException.class);
    }

    @Test
    void aFlowKeyIsChecked_andRefusedForRunsInPerUserOrder() {
        assertThatThrownBy(() -> NewRun.of("s", "u", "x").withFlowKey("a\0b"))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("flowKey");
        assertThatThrownBy(() -> NewRun.of("s", "u", "x").withFlowKey("k".repeat(257)))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("256");
        assertThatThrownBy(() -> NewRun.of("s", "u", "x").withFlowKey(""))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("empty");
        assertThatThrownBy(() -> NewRun.of("s", "u", "x").withPriority(9))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("priority").hasMessageContaining("flow key");
        assertThatThrownBy(() -> NewRun.of("s", "u", "x").withFlowKey("a").withPriority(10))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("priority");
        assertThatThrownBy(() -> NewRun.of("s", "u", "x").withFlowSubKey("c"))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("flowSubKey")
                .hasMessageContaining("flow key");
        assertThatThrownBy(() -> NewRun.of("s", "u", "x").withFlowKey("a").withFlowSubKey("c\0d"))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("flowSubKey");
        assertThatThrownBy(() -> NewRun.of("s", "u", "x").withFlowKey("a").withFlowSubKey("c".repeat(257)))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("flowSubKey").hasMessageContaining("256");
        Runs ordered = runs(bus(), configBuilder(schema + "_o", "w1", workerOptions().build()).ordered(true).build());
        closeables.add(() -> TestServers.dropSchema(schema + "_o"));
        assertThatThrownBy(() -> ordered.submit(NewRun.of("s", "u", "x").withFlowKey("a")))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("per-user order");
        assertThat(ordered.list(RunQuery.newest()).runs()).as("nothing half-written").isEmpty();
    }
}
