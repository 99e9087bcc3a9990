package dev.runbus.runs.internal.schedule;

import dev.runbus.runs.IllegalRunTransitionException;
import dev.runbus.runs.KeyScope;
import dev.runbus.runs.OverlapPolicy;
import dev.runbus.runs.RunNotFoundException;
import dev.runbus.runs.Runs;
import dev.runbus.runs.Schedule;
import dev.runbus.runs.SubmitResult;
import dev.runbus.runs.internal.store.Transactions;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fires due schedules, each fire one transaction (docs/schedules.md, "Exactly once"): with the lease row locked under
 * the firer's token ({@link ScheduleStore#fence}) and the schedule locked only while its next fire time is still the
 * one read ({@link ScheduleStore#lockDue}), it makes the fire's runs in that transaction ({@link Runs#within}), keyed
 * by the schedule and the fire's time, records the fires, and moves the next fire time on. Two firers, or one that
 * lost its lease while paused, can never both commit one fire time.
 */
public final class Firing {

    private static final Logger log = LoggerFactory.getLogger(Firing.class);
    /** The latest due fires of one schedule a check lists; older ones are counted missed. */
    static final int LISTED = 2_000;
    /** The most due fires of one schedule a check counts; beyond, it goes on from the present. */
    static final long COUNTED = 1_000_000;
    /** How many due schedules one query of a pass takes. */
    static final int BATCH = 100;
    /** How many batches one pass takes at most, before it renews its lease. */
    static final int MAX_BATCHES_A_PASS = 50;
    /** How long a schedule that failed to fire is left out before it is tried again. */
    static final Duration RETRY_FAILED = Duration.ofSeconds(30);
    /** The schedules that failed to fire, and until when (System.nanoTime) they are left out. */
    private final java.util.Map<String, Long> failing = new java.util.concurrent.ConcurrentHashMap<>();

    private final DataSource dataSource;
    private final ScheduleStore store;
    private final Runs runs;
    private final Clock clock;

    public Firing(DataSource dataSource, String schema, Runs runs, Clock clock) {
        this.dataSource = dataSource;
        this.store = new ScheduleStore(schema);
        this.runs = runs;
        this.clock = clock;
    }

    /** What one pass did. */
    public record Pass(int fires, int runs, boolean leaseLost) {
    }

    /**
     * Fires what is due at the clock's present under lease {@code token} of {@code holder}, and makes the runs of
     * buffered fires whose schedule has none unfinished. Stops at a lost lease.
     */
    public Pass fireDue(String holder, long token) throws SQLException {
        int fires = 0;
        int made = 0;
        long now = System.nanoTime();
        failing.values().removeIf(until -> until - now <= 0);
        // Batch after batch while they come back full: a scheduler is late by its own slowness only.
        for (int batches = 0; batches < MAX_BATCHES_A_PASS; batches++) {
            List<ScheduleStore.Row> due;
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(true);
                due = store.due(c, clock.instant(), BATCH + failing.size());
            }
            int taken = 0;
            for (ScheduleStore.Row row : due) {
                if (failing.containsKey(row.schedule().name()) || taken == BATCH) {
                    continue;
                }
                taken++;
                Outcome o;
                try {
                    o = fire(row, holder, token);
                } catch (SQLException | RuntimeException e) {
                    // One schedule that cannot fire (a run its template can no longer make) holds up no other: it is
                    // left out for a while, and the batches go on without it.
                    failing.put(row.schedule().name(), System.nanoTime() + RETRY_FAILED.toNanos());
                    log.error("firing schedule {} at {} failed; tried again in {} s", row.schedule().name(),
                            row.nextFireAt(), RETRY_FAILED.toSeconds(), e);
                    continue;
                }
                if (o == null) {
                    return new Pass(fires, made, true);
                }
                fires += o.fires;
                made += o.runs;
            }
            if (taken < BATCH) {
                break;
            }
        }
        List<String> buffered;
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            buffered = store.withBuffered(c);
        }
        for (String name : buffered) {
            try {
                Boolean m = releaseBuffered(name, holder, token);
                if (m == null) {
                    return new Pass(fires, made, true);
                }
                made += m ? 1 : 0;
            } catch (SQLException | RuntimeException e) {
                log.error("making the run of a buffered fire of schedule {} failed; tried again at the next pass",
                        name, e);
            }
        }
        return new Pass(fires, made, false);
    }

    private record Outcome(int fires, int runs) {
    }

    /** One schedule's due fires in one transaction; null when the lease was lost. */
    private Outcome fire(ScheduleStore.Row read, String holder, long token) throws SQLException {
        Made[] made = new Made[1];
        Outcome outcome;
        try (Connection c = dataSource.getConnection()) {
            outcome = Transactions.in(c, tx -> {
                if (!store.fence(tx, holder, token)) {
                    return null;
                }
                ScheduleStore.Row row = store.lockDue(tx, read.schedule().name(), read.nextFireAt()).orElse(null);
                if (row == null) { // fired by another, or changed meanwhile
                    return new Outcome(0, 0);
                }
                Schedule s = row.schedule();
                Instant now = clock.instant();
                Deque<Instant> latest = new ArrayDeque<>();
                long older = 0;
                long counted = 0;
                Instant f = row.nextFireAt();
                while (f != null && !f.isAfter(now) && counted < COUNTED) {
                    if (latest.size() == LISTED) {
                        latest.removeFirst();
                        older++;
                    }
                    latest.addLast(f);
                    counted++;
                    f = s.nextFireAfter(f, row.anchor());
                }
                Instant next = f != null && f.isAfter(now) ? f : s.nextFireAfter(now, row.anchor());
                FirePlan plan = FirePlan.of(new ArrayList<>(latest), older, now, s.misfire());
                made[0] = make(tx, s, plan, token);
                store.advance(tx, s.name(), next, made[0].last, made[0].fired, made[0].skipped, plan.missed(),
                        made[0].caughtUp);
                return new Outcome(plan.onTime().size() + plan.caughtUp().size(), made[0].runs);
            });
        }
        if (outcome != null && outcome.runs > 0) {
            relay();
        }
        if (made[0] != null) {
            // After the commit: a fire that fails leaves the running ones alone, a crash between the two leaves them
            // to end on their own (the new run was made).
            cancel(made[0].toCancel);
        }
        return outcome;
    }

    private static final class Made {
        final List<UUID> toCancel = new ArrayList<>();
        long fired;
        long caughtUp;
        long skipped;
        int runs;
        Instant last;
    }

    /** Applies the overlap policy to the planned fires, oldest first, and makes their runs. */
    private Made make(Connection c, Schedule s, FirePlan plan, long token) throws SQLException {
        List<Instant> fires = new ArrayList<>(plan.caughtUp());
        fires.addAll(plan.onTime());
        fires.sort(null);
        Made made = new Made();
        OverlapPolicy overlap = s.overlap();
        List<UUID> unfinished = overlap.kind() == OverlapPolicy.Kind.ALLOW_ALL ? List.of()
                : store.unfinishedRuns(c, s.name());
        List<Instant> buffered = overlap.kind() == OverlapPolicy.Kind.BUFFER ? store.buffered(c, s.name()) : List.of();
        int waiting = buffered.size();
        if (!buffered.isEmpty() && unfinished.isEmpty()) {
            // the oldest waiting fire goes first, before the new ones join the wait
            SubmitResult r = submit(c, s, buffered.get(0));
            store.bufferedMade(c, s.name(), buffered.get(0), r.runId(), token);
            waiting--;
            made.runs++;
        }
        for (int i = 0; i < fires.size(); i++) {
            Instant fire = fires.get(i);
            String outcome = plan.caughtUp().contains(fire) ? "caught_up" : "fired";
            boolean lastOfThem = i == fires.size() - 1;
            boolean make;
            switch (overlap.kind()) {
                case ALLOW_ALL -> make = true;
                case SKIP -> make = unfinished.isEmpty() && made.runs == 0 && lastOfThem;
                case CANCEL_RUNNING -> {
                    make = lastOfThem; // the earlier ones would be cancelled at once by the later
                    if (make) {
                        made.toCancel.addAll(unfinished); // once this fire has committed
                    }
                }
                case BUFFER -> {
                    make = unfinished.isEmpty() && made.runs == 0;
                    if (!make && waiting < overlap.buffer()) {
                        if (store.insertFire(c, s.name(), fire, null, "buffered", token)) {
                            waiting++;
                            made.last = fire;
                        }
                        continue;
                    }
                }
                default -> throw new IllegalStateException("unknown overlap policy " + overlap);
            }
            if (!make) {
                made.skipped++;
                continue;
            }
            if (makeRun(c, s, fire, outcome, token)) {
                made.runs++;
                made.last = fire;
                if (outcome.equals("caught_up")) {
                    made.caughtUp++;
                } else {
                    made.fired++;
                }
            }
        }
        return made;
    }

    /**
     * Claims one fire and makes its run; false, and no run, when the schedule already had a fire at that time (a
     * backfill made it, say): the claim comes first, so a fire whose run was deleted since is not made again.
     */
    private boolean makeRun(Connection c, Schedule s, Instant fire, String outcome, long token) throws SQLException {
        if (!store.insertFire(c, s.name(), fire, null, outcome, token)) {
            return false;
        }
        store.fireMade(c, s.name(), fire, submit(c, s, fire).runId());
        return true;
    }

    /** Claims a backfilled fire and makes its run; false when the schedule already had a fire at that time. */
    public boolean backfill(Connection c, Schedule s, Instant fire) throws SQLException {
        return makeRun(c, s, fire, "backfilled", 0);
    }

    /** Makes (or finds) the run of one fire of {@code s}, in the caller's transaction on {@code c}. */
    public SubmitResult submit(Connection c, Schedule s, Instant fire) {
        Duration delay = jitter(s, fire);
        return runs.within(c).submit(s.run().withKey(fire.toString()), scopeOf(s.name()), delay);
    }

    /** The key scope of a schedule's runs: its name, apart from every other caller's keys. */
    public static KeyScope scopeOf(String name) {
        return KeyScope.of("runbus.schedule:" + name);
    }

    /** A fire's delay within the schedule's jitter: the same for the fire wherever it is fired. */
    static Duration jitter(Schedule s, Instant fire) {
        long bound = s.jitter().toMillis();
        if (bound == 0) {
            return Duration.ZERO;
        }
        long h = (s.name() + "@" + fire).hashCode() * 0x9E3779B97F4A7C15L;
        return Duration.ofMillis(Math.floorMod(h ^ (h >>> 29), bound + 1));
    }

    private void cancel(List<UUID> unfinished) {
        for (UUID id : unfinished) {
            try {
                runs.cancel(id);
            } catch (IllegalRunTransitionException | RunNotFoundException ended) {
                // it ended meanwhile: nothing to cancel
            }
        }
    }

    /** Makes the run of the oldest buffered fire when none of the schedule's runs is unfinished; null: lease lost. */
    private Boolean releaseBuffered(String name, String holder, long token) throws SQLException {
        Boolean made;
        try (Connection c = dataSource.getConnection()) {
            made = Transactions.in(c, tx -> {
                if (!store.fence(tx, holder, token)) {
                    return null;
                }
                ScheduleStore.Row row = store.lock(tx, name).orElse(null);
                List<Instant> waiting = row == null || row.schedule().paused() ? List.of() : store.buffered(tx, name);
                if (waiting.isEmpty() || !store.unfinishedRuns(tx, name).isEmpty()) {
                    return false;
                }
                SubmitResult r = submit(tx, row.schedule(), waiting.get(0));
                store.bufferedMade(tx, name, waiting.get(0), r.runId(), token);
                return true;
            });
        }
        if (Boolean.TRUE.equals(made)) {
            relay();
        }
        return made;
    }

    /** Publishes the new runs' triggers now; a relay that fails leaves them to the sweeper's relay. */
    private void relay() {
        try {
            runs.relayOnce();
        } catch (RuntimeException e) {
            log.info("the triggers of a schedule's runs wait for the relay: {}", e.getMessage());
        }
    }
}
