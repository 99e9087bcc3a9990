package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.SettableClock;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Recurring schedules (docs/schedules.md) on a clock the test moves: each fire time makes one run however many
 * schedulers fire, misfires after an outage by policy, overlap by policy with a handler that outlasts the interval,
 * daylight-saving time through real fires, and the operations on stored schedules.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ScheduleTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(60);
    private static final Instant T0 = Instant.parse("2026-06-01T00:00:00Z");

    private long fires(String name, String outcome) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".schedule_fires WHERE schedule_name = '" + name
                + "'" + (outcome == null ? "" : " AND outcome = '" + outcome + "'"));
    }

    private long runsOf(String name) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".schedule_fires f JOIN " + schema
                + ".runs r ON r.id = f.run_id WHERE f.schedule_name = '" + name + "'");
    }

    private static NewRun job(String input) {
        return NewRun.of("scheduled", "scheduler", input);
    }

    /**
     * A schedule whose every fire makes a run: no worker runs the runs of most tests here, so under the default
     * overlap policy (skip) a pending run would hold back every later fire.
     */
    private static Schedule every(String name, Duration interval, String input) {
        return Schedule.every(name, interval, job(input)).withOverlap(OverlapPolicy.allowAll());
    }

    /**
     * Two firers that both hold the lease's token (a process that paused past its lease and has not yet found out, and
     * the one that took over), firing together at every step of the clock from two threads: the lease does not separate
     * them, the schedule's row lock and the next fire time read under it do; each fire is made once, counted once.
     */
    @Test
    void everyFireTimeMakesOneRun_withTwoFirersOnOneTokenAtOnce() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        SettableClock clock = new SettableClock(T0);
        runs.schedules(clock).create(every("minutely", Duration.ofMinutes(1), "tick"));
        execute("UPDATE " + schema + ".scheduler_lease SET holder = 'both', token = 7, expires_at = now() + "
                + "interval '1 hour'");
        var a = new dev.runbus.runs.internal.schedule.Firing(runsDataSource(), schema, runs, clock);
        var b = new dev.runbus.runs.internal.schedule.Firing(runsDataSource(), schema, runs, clock);
        ExecutorService two = Executors.newFixedThreadPool(2);
        try {
            int handled = 0;
            for (int i = 1; i <= 30; i++) {
                clock.advance(Duration.ofMinutes(1));
                CountDownLatch go = new CountDownLatch(1);
                Future<Integer> fa = two.submit(() -> {
                    go.await();
                    return a.fireDue("both", 7).fires();
                });
                Future<Integer> fb = two.submit(() -> {
                    go.await();
                    return b.fireDue("both", 7).fires();
                });
                go.countDown();
                handled += fa.get() + fb.get();
            }
            assertThat(handled).as("fires handled by the two together").isEqualTo(30);
        } finally {
            two.shutdownNow();
        }
        assertThat(fires("minutely", "fired")).isEqualTo(30);
        assertThat(runsOf("minutely")).isEqualTo(30);
        assertThat(TestDatabase.count("SELECT count(DISTINCT fire_at) FROM " + schema + ".schedule_fires"))
                .isEqualTo(30);
        ScheduleState state = runs.schedules(clock).get("minutely").orElseThrow();
        assertThat(state.fired()).isEqualTo(30);
        assertThat(state.missed()).isZero();
        assertThat(state.lastFireAt()).isEqualTo(T0.plus(Duration.ofMinutes(30)));
        assertThat(state.nextFireAt()).isEqualTo(T0.plus(Duration.ofMinutes(31)));
    }

    /** A scheduler's loop: started on two "processes", only the lease holder fires, and a stale token fires nothing. */
    @Test
    void startedSchedulers_fireEachTimeOnce_andAFirerThatLostItsLeaseFiresNothing() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        SettableClock clock = new SettableClock(T0);
        Schedules a = runs.schedules(clock);
        Schedules b = runs.schedules(clock);
        a.create(every("looped", Duration.ofSeconds(10), "loop"));
        a.startScheduler(Duration.ofMillis(20), Duration.ofSeconds(2));
        b.startScheduler(Duration.ofMillis(20), Duration.ofSeconds(2));
        for (int i = 1; i <= 20; i++) {
            clock.advance(Duration.ofSeconds(10));
            Instant fire = clock.instant();
            Wait.until("fire " + i, WAIT, () -> a.get("looped").orElseThrow().nextFireAt().isAfter(fire));
        }
        a.close();
        b.close();
        assertThat(fires("looped", "fired")).isEqualTo(20);
        assertThat(runsOf("looped")).isEqualTo(20);

        // a firer whose lease another took (its token old) fires nothing
        clock.advance(Duration.ofSeconds(10));
        var firing = new dev.runbus.runs.internal.schedule.Firing(runsDataSource(), schema, runs, clock);
        execute("UPDATE " + schema + ".scheduler_lease SET holder = 'other', token = token + 1, "
                + "expires_at = now() + interval '1 minute'");
        var pass = firing.fireDue("stale", 1);
        assertThat(pass.leaseLost()).isTrue();
        assertThat(pass.runs()).isZero();
        assertThat(fires("looped", null)).isEqualTo(20);
    }

    /**
     * A 3 h outage of every scheduler over a schedule of every 15 minutes (12 fires missed): run once makes one run,
     * for the latest; catch-up makes min(missed, n); skip makes none; each counts what it missed.
     */
    @Test
    void anOutage_makesOneRunWithRunOnce_minOfMissedAndNWithCatchUp_noneWithSkip() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        SettableClock clock = new SettableClock(T0);
        Schedules schedules = runs.schedules(clock);
        Duration every = Duration.ofMinutes(15);
        schedules.create(every("once", every, "once"));
        schedules.create(every("catch5", every, "c5").withMisfire(MisfirePolicy.catchUp(5, Duration.ofHours(4))));
        schedules.create(every("catch20", every, "c20").withMisfire(MisfirePolicy.catchUp(20, Duration.ofHours(4))));
        schedules.create(every("window", every, "w").withMisfire(MisfirePolicy.catchUp(20, Duration.ofHours(1))));
        schedules.create(every("skip", every, "skip").withMisfire(MisfirePolicy.skip()));
        // caught-up fires meet the overlap policy as any: under skip, the latest alone makes a run, with buffer one
        // the next waits for it
        schedules.create(Schedule.every("catch5skip", every, job("c5s")).withMisfire(MisfirePolicy.catchUp(5,
                Duration.ofHours(4))));
        schedules.create(Schedule.every("catch5buffer", every, job("c5b")).withMisfire(MisfirePolicy.catchUp(5,
                Duration.ofHours(4))).withOverlap(OverlapPolicy.bufferOne()));
        clock.advance(Duration.ofHours(3).plusMinutes(5)); // fires at 0:15 … 3:00 were due: 12, all late
        assertThat(schedules.fireDue()).isEqualTo(1 + 5 + 12 + 4 + 0 + 5 + 5);

        assertThat(runsOf("once")).isEqualTo(1);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".schedule_fires WHERE schedule_name = 'once'"
                + " AND fire_at = '" + T0.plus(Duration.ofHours(3)) + "' AND outcome = 'caught_up'")).isEqualTo(1);
        assertThat(runsOf("catch5")).isEqualTo(5);
        assertThat(runsOf("catch20")).isEqualTo(12);
        assertThat(runsOf("window")).as("only the missed fires of the last hour").isEqualTo(4);
        assertThat(runsOf("skip")).isZero();
        assertThat(schedules.get("once").orElseThrow()).satisfies(s -> {
            assertThat(s.caughtUp()).isEqualTo(1);
            assertThat(s.missed()).isEqualTo(11);
            assertThat(s.nextFireAt()).isEqualTo(T0.plus(Duration.ofMinutes(195)));
        });
        assertThat(schedules.get("catch5").orElseThrow().missed()).isEqualTo(7);
        assertThat(schedules.get("skip").orElseThrow().missed()).isEqualTo(12);
        assertThat(runsOf("catch5skip")).isEqualTo(1);
        assertThat(schedules.get("catch5skip").orElseThrow().skippedOverlap()).isEqualTo(4);
        assertThat(runsOf("catch5buffer")).isEqualTo(1);
        assertThat(fires("catch5buffer", "buffered")).isEqualTo(1);

        // on time again: every policy fires the next one
        clock.set(T0.plus(Duration.ofMinutes(195)).plusSeconds(2));
        assertThat(schedules.fireDue()).isEqualTo(7);
        assertThat(runsOf("skip")).isEqualTo(1);
        assertThat(schedules.get("skip").orElseThrow().fired()).isEqualTo(1);
    }

    /**
     * Overlap, with a handler that outlasts the interval: skip makes no run while one is unfinished; buffer one keeps
     * one fire waiting and makes its run when the first ends; allow all makes every run; cancel running cancels the
     * unfinished run and makes its own.
     */
    @Test
    void overlapPolicies_withAHandlerThatLastsTwiceTheInterval() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().concurrency(8).build());
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger started = new AtomicInteger();
        runs.startWorker(run -> {
            started.incrementAndGet();
            while (!release.await(20, TimeUnit.MILLISECONDS)) {
                run.throwIfCancelRequested();
            }
            return List.of(Reply.assistant("done"));
        });
        SettableClock clock = new SettableClock(T0);
        Schedules schedules = runs.schedules(clock);
        Duration every = Duration.ofMinutes(1);
        schedules.create(Schedule.every("skip", every, job("skip")));
        schedules.create(Schedule.every("buffer", every, job("buffer")).withOverlap(OverlapPolicy.bufferOne()));
        schedules.create(Schedule.every("allow", every, job("allow")).withOverlap(OverlapPolicy.allowAll()));
        schedules.create(Schedule.every("cancel", every, job("cancel")).withOverlap(OverlapPolicy.cancelRunning()));

        clock.advance(every);
        assertThat(schedules.fireDue()).isEqualTo(4);
        Wait.until("the four first runs running", WAIT, () -> started.get() == 4);
        for (int i = 0; i < 2; i++) { // two more fires while the first runs still run
            clock.advance(every);
            schedules.fireDue();
        }
        assertThat(runsOf("skip")).isEqualTo(1);
        assertThat(schedules.get("skip").orElseThrow().skippedOverlap()).isEqualTo(2);
        assertThat(runsOf("buffer")).isEqualTo(1);
        assertThat(fires("buffer", "buffered")).isEqualTo(1);
        assertThat(schedules.get("buffer").orElseThrow()).satisfies(s -> {
            assertThat(s.waiting()).isEqualTo(1);
            assertThat(s.skippedOverlap()).isEqualTo(1);
        });
        assertThat(runsOf("allow")).isEqualTo(3);
        assertThat(runsOf("cancel")).isEqualTo(3);
        Wait.until("the cancelled runs ended", WAIT, () -> TestDatabase.count("SELECT count(*) FROM " + schema
                + ".schedule_fires f JOIN " + schema + ".runs r ON r.id = f.run_id WHERE f.schedule_name = 'cancel'"
                + " AND r.status = 'cancelled'") == 2);

        release.countDown();
        Wait.until("every run made so far ended", WAIT, () -> TestDatabase.count("SELECT count(*) FROM " + schema
                + ".runs WHERE status IN ('pending', 'running')") == 0);
        schedules.fireDue(); // nothing due: makes the buffered fire's run
        assertThat(runsOf("buffer")).isEqualTo(2);
        assertThat(fires("buffer", "buffered")).isZero();
        assertThat(schedules.get("buffer").orElseThrow().fired()).isEqualTo(2);
        Wait.until("the buffered run done", WAIT, () -> TestDatabase.count("SELECT count(*) FROM " + schema
                + ".runs WHERE status = 'done' AND input = 'buffer'") == 2);
    }

    /** A deleted schedule's buffered fires are dropped: the schedule made again under its name starts without them. */
    @Test
    void deletingASchedule_dropsItsBufferedFires() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build()); // no worker: the first run stays pending
        SettableClock clock = new SettableClock(T0);
        Schedules schedules = runs.schedules(clock);
        Schedule buffered = Schedule.every("buffered", Duration.ofMinutes(1), job("b"))
                .withOverlap(OverlapPolicy.bufferOne());
        schedules.create(buffered);
        for (int i = 0; i < 2; i++) {
            clock.advance(Duration.ofMinutes(1));
            schedules.fireDue();
        }
        assertThat(runsOf("buffered")).isEqualTo(1);
        assertThat(schedules.get("buffered").orElseThrow().waiting()).isEqualTo(1);
        assertThat(schedules.delete("buffered")).isTrue();
        assertThat(fires("buffered", "dropped")).isEqualTo(1);
        assertThat(schedules.create(buffered).waiting()).isZero();
        execute("UPDATE " + schema + ".runs SET status = 'done'"); // its old run ends: nothing waits to be made
        schedules.fireDue();
        assertThat(runsOf("buffered")).isEqualTo(1);
        assertThat(fires("buffered", "dropped")).isEqualTo(1);
    }

    /** Real fires through New York's fall-back day: a wildcard hourly schedule fires 25 times, a fixed one once. */
    @Test
    void daylightSavingTime_throughRealFires() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        ZoneId ny = ZoneId.of("America/New_York");
        Instant midnight = java.time.LocalDate.parse("2026-11-01").atStartOfDay(ny).toInstant();
        SettableClock clock = new SettableClock(midnight.minusSeconds(1));
        Schedules schedules = runs.schedules(clock);
        schedules.create(Schedule.cron("hourly", "0 * * * *", job("h")).withZone(ny)
                .withOverlap(OverlapPolicy.allowAll()));
        schedules.create(Schedule.cron("fixed", "30 1 * * *", job("f")).withZone(ny));
        Instant end = midnight.plus(Duration.ofHours(25));
        // a minute at a time: every fire found on time (within the minute's grace)
        while (clock.instant().plus(Duration.ofMinutes(1)).isBefore(end)) { // the day's fires, not the next day's
            clock.advance(Duration.ofMinutes(1));
            schedules.fireDue();
        }
        assertThat(runsOf("hourly")).isEqualTo(25);
        assertThat(runsOf("fixed")).isEqualTo(1);
        assertThat(fires("hourly", "fired")).as("on time, none caught up").isEqualTo(25);
        assertThat(schedules.get("hourly").orElseThrow().missed()).isZero();
    }

    @Test
    void storedSchedules_createPutPauseResumeDeletePreviewAndBackfill() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        SettableClock clock = new SettableClock(T0);
        Schedules schedules = runs.schedules(clock);
        Schedule daily = Schedule.cron("daily", "0 9 * * *", job("d")).withZone(ZoneId.of("Europe/London"))
                .withJitter(Duration.ofSeconds(30)).withOverlap(OverlapPolicy.allowAll());
        ScheduleState created = schedules.create(daily);
        assertThat(created.schedule()).isEqualTo(daily);
        assertThat(created.nextFireAt()).isEqualTo(Instant.parse("2026-06-01T08:00:00Z"));
        assertThatThrownBy(() -> schedules.create(daily)).isInstanceOf(ScheduleExistsException.class);
        assertThat(schedules.put(daily.withRun(job("d2"))).schedule().run().input()).isEqualTo("d2");
        assertThat(schedules.preview(daily, 2)).containsExactly(Instant.parse("2026-06-01T08:00:00Z"),
                Instant.parse("2026-06-02T08:00:00Z"));

        assertThat(schedules.pause("daily").nextFireAt()).isNull();
        clock.advance(Duration.ofDays(2));
        assertThat(schedules.fireDue()).isZero();
        ScheduleState resumed = schedules.resume("daily");
        assertThat(resumed.nextFireAt()).isEqualTo(Instant.parse("2026-06-03T08:00:00Z"));
        assertThat(resumed.missed()).as("paused fires are not missed").isZero();

        assertThat(schedules.backfill("daily", T0.minus(Duration.ofDays(3)), T0)).isEqualTo(3);
        assertThat(schedules.backfill("daily", T0.minus(Duration.ofDays(3)), T0)).as("again: nothing new").isZero();
        assertThat(runsOf("daily")).isEqualTo(3);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE input = 'd2'")).isEqualTo(3);
        execute("DELETE FROM " + schema + ".runs WHERE input = 'd2'"); // as a prune of finished runs would
        assertThat(schedules.backfill("daily", T0.minus(Duration.ofDays(3)), T0)).as("fires whose runs went: not made "
                + "again").isZero();
        assertThatThrownBy(() -> schedules.backfill("daily", T0, T0.plus(Duration.ofDays(30))))
                .isInstanceOf(InvalidScheduleException.class).hasMessageContaining("future");
        schedules.create(Schedule.every("interval", Duration.ofHours(1), job("i")));
        clock.advance(Duration.ofMinutes(20));
        Instant anchor = clock.instant().minus(Duration.ofMinutes(20));
        assertThat(schedules.preview("interval", 2)).as("counted from its creation, not from now").containsExactly(
                anchor.plus(Duration.ofHours(1)), anchor.plus(Duration.ofHours(2)));
        schedules.delete("interval");

        assertThat(schedules.list(null, 10)).extracting(s -> s.schedule().name()).containsExactly("daily");
        assertThat(schedules.delete("daily")).isTrue();
        assertThat(schedules.delete("daily")).isFalse();
        assertThat(schedules.get("daily")).isEmpty();
        clock.advance(Duration.ofDays(2));
        assertThat(schedules.fireDue()).isZero();
        assertThatThrownBy(() -> schedules.pause("daily")).isInstanceOf(ScheduleNotFoundException.class);
        // a deleted name can be used again
        assertThat(schedules.create(daily).fired()).isZero();

        assertThatThrownBy(() -> Schedule.every("x", Duration.ofMinutes(1), NewRun.of("s", "u", "i").withKey("k")))
                .isInstanceOf(InvalidScheduleException.class).hasMessageContaining("idempotency key");
        assertThatThrownBy(() -> Schedule.every("bad name", Duration.ofMinutes(1), job("i")))
                .isInstanceOf(InvalidScheduleException.class).hasMessageStartingWith("name ");
        assertThatThrownBy(() -> Schedule.every("x", Duration.ofMillis(10), job("i")))
                .isInstanceOf(InvalidScheduleException.class).hasMessageStartingWith("interval ");
        clock.advance(Duration.ofDays(3000));
        assertThatThrownBy(() -> schedules.backfill("daily", T0, T0.plus(Duration.ofDays(2000))))
                .isInstanceOf(InvalidScheduleException.class).hasMessageContaining("more than 1000");
    }

    /** A fire's run waits its jitter, the same wherever it is fired, and still runs once. */
    @Test
    void jitterDelaysAFiresRun_withinTheJitter() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        SettableClock clock = new SettableClock(T0);
        Schedules schedules = runs.schedules(clock);
        schedules.create(every("spread", Duration.ofMinutes(1), "j").withJitter(Duration.ofMinutes(10)));
        for (int i = 0; i < 5; i++) {
            clock.advance(Duration.ofMinutes(1));
            schedules.fireDue();
        }
        assertThat(runsOf("spread")).isEqualTo(5);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE next_attempt_at - created_at "
                + "BETWEEN interval '0' AND interval '10 minutes'")).as("each due within its jitter").isEqualTo(5);
        assertThat(TestDatabase.count("SELECT count(DISTINCT next_attempt_at - created_at) FROM " + schema + ".runs"))
                .as("spread").isGreaterThan(1);
    }
}
