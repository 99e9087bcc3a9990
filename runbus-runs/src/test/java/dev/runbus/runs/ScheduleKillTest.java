package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.SchedulerNode;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.Wait;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two scheduler processes on a clock the test sets, over 24 simulated hours (New York's fall-back day, 100 fires of
 * {@code *}{@code /15 * * * *}): every two simulated hours, right as a fire falls due, the one holding the lease is
 * SIGKILLed and started again, as a supervisor would. Every fire time makes exactly one run, none is missed, none is
 * made twice (docs/schedules.md, "Exactly once").
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ScheduleKillTest extends RunsTestSupport {

    /** The clock moves from fire time to fire time. */
    private static final Duration STEP = Duration.ofMinutes(15);
    /** Every 8 steps: two simulated hours, each time as a fire falls due; twelve kills in the 25-hour day. */
    private static final int KILL_EVERY = 8;

    private final List<ChildJvm> children = new ArrayList<>();
    @TempDir
    Path dir;

    @AfterEach
    void killChildren() throws Exception {
        for (ChildJvm c : children) {
            c.kill();
        }
    }

    private void setClock(Path file, Instant at) throws Exception {
        Path next = dir.resolve("clock.next");
        Files.writeString(next, Long.toString(at.toEpochMilli()));
        Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private ChildJvm scheduler(Path clock) throws Exception {
        ChildJvm c = ChildJvm.start(SchedulerNode.class, redis.uri(), prefix, TestDatabase.URL, schema,
                clock.toString(), "50", "1000");
        children.add(c);
        return c;
    }

    private static String idOf(ChildJvm c) {
        return c.awaitLine("SCHEDULER ", Duration.ofSeconds(60)).substring("SCHEDULER ".length());
    }

    private long doneUpTo(Instant at) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".schedules WHERE next_fire_at IS NULL "
                + "OR next_fire_at > '" + at + "'");
    }

    @Test
    void theLeaderKilledAgainAndAgain_everyFireTimeMakesExactlyOneRun() throws Exception {
        ZoneId ny = ZoneId.of("America/New_York");
        Instant dayStart = LocalDate.parse("2026-11-01").atStartOfDay(ny).toInstant();
        Instant dayEnd = LocalDate.parse("2026-11-02").atStartOfDay(ny).toInstant();
        Path clock = dir.resolve("clock");
        Instant now = dayStart.minus(STEP);
        setClock(clock, now);
        Runs runs = runs(bus(), "w1", workerOptions().build()); // migrates; runs no worker
        runs.schedules(SchedulerNode.fromFile(clock)).create(Schedule.cron("quarterly", "*/15 * * * *",
                NewRun.of("s", "u", "q")).withZone(ny).withOverlap(OverlapPolicy.allowAll())
                .withEndAt(dayEnd.minusSeconds(1)));
        List<ChildJvm> live = new ArrayList<>(List.of(scheduler(clock), scheduler(clock)));
        List<String> ids = new ArrayList<>(List.of(idOf(live.get(0)), idOf(live.get(1))));
        int kills = 0;
        for (int step = 1; now.isBefore(dayEnd.minus(STEP)); step++) {
            now = now.plus(STEP);
            setClock(clock, now);
            if (step > 1 && (step - 1) % KILL_EVERY == 0) { // a fire falls due now: the leader may be in its transaction
                String holder = TestDatabase.string("SELECT holder FROM " + schema + ".scheduler_lease");
                int i = ids.indexOf(holder);
                assertThat(i).as("the lease's holder %s is one of %s", holder, ids).isNotNegative();
                live.get(i).kill();
                kills++;
                ChildJvm again = scheduler(clock);
                live.set(i, again);
                ids.set(i, idOf(again));
            }
            Instant at = now;
            Wait.until("the fires up to " + at + " made", Duration.ofSeconds(60), () -> doneUpTo(at) == 1);
        }

        List<Instant> expected = CronExpression.parse("*/15 * * * *").next(dayStart.minusSeconds(1), ny, 100);
        assertThat(expected).hasSize(100).last().isEqualTo(dayEnd.minus(Duration.ofMinutes(15)));
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".schedule_fires")).as("fires")
                .isEqualTo(100);
        assertThat(TestDatabase.count("SELECT count(DISTINCT fire_at) FROM " + schema + ".schedule_fires WHERE "
                + "fire_at >= '" + expected.get(0) + "' AND fire_at <= '" + expected.get(99) + "'")).isEqualTo(100);
        assertThat(TestDatabase.count("SELECT count(DISTINCT run_id) FROM " + schema + ".schedule_fires"))
                .as("a run each").isEqualTo(100);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs")).as("runs").isEqualTo(100);
        ScheduleState state = runs.schedules().get("quarterly").orElseThrow();
        assertThat(state.fired()).isEqualTo(100);
        assertThat(state.missed() + state.caughtUp() + state.skippedOverlap()).isZero();
        assertThat(state.nextFireAt()).as("past its end").isNull();
        assertThat(kills).as("leaders killed").isEqualTo(12);
        long leases = TestDatabase.count("SELECT count(DISTINCT token) FROM " + schema + ".schedule_fires");
        assertThat(leases).as("fired under a lease after each kill").isGreaterThanOrEqualTo(kills + 1);
        System.out.printf("SCHEDULES kill test: 100 fires over 24 simulated hours, %d leaders killed, fired under %d"
                + " leases%n", kills, leases);
    }
}
