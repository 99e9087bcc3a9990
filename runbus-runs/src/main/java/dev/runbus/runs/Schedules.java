package dev.runbus.runs;

import dev.runbus.runs.internal.schedule.Firing;
import dev.runbus.runs.internal.schedule.ScheduleStore;
import dev.runbus.runs.internal.schedule.SchedulerLoop;
import dev.runbus.runs.internal.store.Transactions;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import javax.sql.DataSource;

/**
 * Recurring schedules of runs, stored in PostgreSQL beside the runs (docs/schedules.md): create, replace, read,
 * pause, resume and delete them, preview their next fire times, backfill a range, and run the scheduler that fires
 * them. Got from {@link Runs#schedules()}.
 *
 * <p>Each fire of a schedule makes one run, exactly once however many schedulers run and whichever of them dies: the
 * fire is one transaction that moves the schedule's next fire time on, inserts the run (keyed by the schedule's name
 * and the fire's time) and records the fire, under the lease of the one scheduler that fires. The run then goes as
 * any run: its trigger is published after the commit, and a worker runs it.
 *
 * <p>The clock decides which fires are due ({@link Runs#schedules(Clock)} takes another, e.g. to simulate a day);
 * PostgreSQL's clock times the lease and the rows.
 */
public final class Schedules implements AutoCloseable {

    /** How often a scheduler looks for due fires, and renews its lease. */
    public static final Duration DEFAULT_POLL = Duration.ofSeconds(1);
    /** How long a scheduler's lease lasts unrenewed: another takes over this long after it died. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(10);
    /** The most fires one {@link #backfill} makes, and one {@link #preview} lists. */
    public static final int MAX_FIRES = 1_000;

    private final DataSource dataSource;
    private final String schema;
    private final ScheduleStore store;
    private final Firing firing;
    private final Clock clock;
    private final Runs runs;
    private SchedulerLoop scheduler;

    Schedules(DataSource dataSource, String schema, Runs runs, Clock clock) {
        this.runs = runs;
        this.dataSource = dataSource;
        this.schema = schema;
        this.store = new ScheduleStore(schema);
        this.clock = clock;
        this.firing = new Firing(dataSource, schema, runs, clock);
    }

    /**
     * Stores a new schedule; it fires from its start, or from now.
     *
     * @throws ScheduleExistsException when a live schedule has its name ({@link #put} replaces)
     * @throws RunStoreException       when PostgreSQL fails
     */
    public ScheduleState create(Schedule schedule) {
        return write(schedule, false);
    }

    /**
     * Stores a schedule, in place of a live one of its name if there is one: its fires and counters stay, and its
     * next fire time is reckoned afresh from now (an interval schedule keeps counting from where it did).
     */
    public ScheduleState put(Schedule schedule) {
        return write(schedule, true);
    }

    private ScheduleState write(Schedule schedule, boolean replace) {
        Objects.requireNonNull(schedule, "schedule");
        // What every fire's run would be refused for (a flow key or a jitter on runs in per-user order), refused now
        try {
            runs.checkSubmittable(schedule.run());
            runs.checkDelay(schedule.jitter());
            Runs.checkExpiry(schedule.run(), schedule.jitter());
        } catch (InvalidRunException e) {
            throw new InvalidScheduleException(e.field().equals("delay") ? "jitter" : "run", e.problem());
        }
        try (Connection c = dataSource.getConnection()) {
            return Transactions.in(c, tx -> {
                if (!store.put(tx, schedule, clock.instant(), replace)) {
                    throw new ScheduleExistsException(schedule.name());
                }
                return store.get(tx, schedule.name()).orElseThrow();
            });
        } catch (SQLException e) {
            throw new RunStoreException("storing schedule " + schedule.name() + " failed: " + e.getMessage(), e);
        }
    }

    /** The live schedule of this name, with what it has done. */
    public Optional<ScheduleState> get(String name) {
        Objects.requireNonNull(name, "name");
        try (Connection c = autoCommit()) {
            return store.get(c, name);
        } catch (SQLException e) {
            throw new RunStoreException("reading schedule " + name + " failed: " + e.getMessage(), e);
        }
    }

    /** Up to {@code limit} (1 to 1000) live schedules whose names sort after {@code afterName} (null: the first). */
    public List<ScheduleState> list(String afterName, int limit) {
        if (limit < 1 || limit > 1000) {
            throw new InvalidScheduleException("limit", "must be 1 to 1000, not " + limit);
        }
        try (Connection c = autoCommit()) {
            return store.list(c, afterName, limit);
        } catch (SQLException e) {
            throw new RunStoreException("listing schedules failed: " + e.getMessage(), e);
        }
    }

    /**
     * Deletes the schedule: it fires no more (a fire in progress commits or not, as a whole), and its buffered fires
     * are dropped. Its runs are not touched. False when there was none.
     */
    public boolean delete(String name) {
        Objects.requireNonNull(name, "name");
        try (Connection c = dataSource.getConnection()) {
            return Transactions.in(c, tx -> store.delete(tx, name));
        } catch (SQLException e) {
            throw new RunStoreException("deleting schedule " + name + " failed: " + e.getMessage(), e);
        }
    }

    /** Pauses the schedule: it fires no more until resumed. @throws ScheduleNotFoundException when there is none */
    public ScheduleState pause(String name) {
        return setPaused(name, true);
    }

    /**
     * Resumes a paused schedule: it fires from now on, its next fire time reckoned from now (the fires while it was
     * paused are neither made nor counted missed). Resuming a running schedule changes nothing.
     */
    public ScheduleState resume(String name) {
        return setPaused(name, false);
    }

    private ScheduleState setPaused(String name, boolean paused) {
        Objects.requireNonNull(name, "name");
        try (Connection c = dataSource.getConnection()) {
            return Transactions.in(c, tx -> {
                ScheduleStore.Row row = store.lock(tx, name).orElseThrow(() -> new ScheduleNotFoundException(name));
                if (row.schedule().paused() != paused) {
                    Instant next = paused ? null : row.schedule().nextFireAfter(clock.instant(), row.anchor());
                    store.setPaused(tx, name, paused, next);
                }
                return store.get(tx, name).orElseThrow();
            });
        } catch (SQLException e) {
            throw new RunStoreException((paused ? "pausing" : "resuming") + " schedule " + name + " failed: "
                    + e.getMessage(), e);
        }
    }

    /**
     * The next {@code n} (0 to {@value #MAX_FIRES}) fire times of a schedule not stored (yet), from now: as it would fire
     * if it were created now (an interval counting from now, unless it has a start).
     */
    public List<Instant> preview(Schedule schedule, int n) {
        Objects.requireNonNull(schedule, "schedule");
        Instant now = clock.instant();
        return fires(schedule, now, now, n);
    }

    /**
     * The next {@code n} (0 to {@value #MAX_FIRES}) fire times of the stored schedule from now, an interval counting
     * from where it does (its start, or its creation); none while it is paused.
     *
     * @throws ScheduleNotFoundException when there is none
     */
    public List<Instant> preview(String name, int n) {
        Objects.requireNonNull(name, "name");
        try (Connection c = autoCommit()) {
            ScheduleStore.Row row = store.find(c, name).orElseThrow(() -> new ScheduleNotFoundException(name));
            return row.schedule().paused() ? List.of() : fires(row.schedule(), clock.instant(), row.anchor(), n);
        } catch (SQLException e) {
            throw new RunStoreException("reading schedule " + name + " failed: " + e.getMessage(), e);
        }
    }

    private static List<Instant> fires(Schedule schedule, Instant from, Instant anchor, int n) {
        if (n < 0 || n > MAX_FIRES) {
            throw new InvalidScheduleException("n", "must be 0 to " + MAX_FIRES + ", not " + n);
        }
        List<Instant> fires = new ArrayList<>(n);
        for (Instant at = from; fires.size() < n; ) {
            at = schedule.nextFireAfter(at, anchor);
            if (at == null) {
                break;
            }
            fires.add(at);
        }
        return fires;
    }

    /**
     * Makes a run for each of the schedule's fire times from {@code from} to {@code to} (both included; at most
     * {@value #MAX_FIRES}), as if it had fired then, whatever its overlap policy, pause or misfire policy: a fire time
     * that already made a run (fired, caught up or backfilled before) makes none again. Returns the runs made.
     *
     * @throws ScheduleNotFoundException when there is no such schedule
     * @throws InvalidScheduleException  when the range is empty or holds more than {@value #MAX_FIRES} fire times
     */
    public int backfill(String name, Instant from, Instant to) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        if (to.isBefore(from)) {
            throw new InvalidScheduleException("to", "must not be before from (" + from + "), not " + to);
        }
        if (to.isAfter(clock.instant())) { // a future fire is the scheduler's to make, by the schedule's policies
            throw new InvalidScheduleException("to", "must not be in the future, not " + to);
        }
        if (!RunQuery.inRange(from)) {
            throw new InvalidScheduleException("from", "must be in the years 0001 to 9999, not " + from);
        }
        try (Connection c = dataSource.getConnection()) {
            return Transactions.in(c, tx -> {
                ScheduleStore.Row row = store.lock(tx, name).orElseThrow(() -> new ScheduleNotFoundException(name));
                // its fire times before its start and after its end too; an interval still counts from its start
                Instant anchor = row.schedule().startAt() != null ? row.schedule().startAt() : row.anchor();
                Schedule s = row.schedule().withStartAt(null).withEndAt(null);
                List<Instant> fires = new ArrayList<>();
                for (Instant at = s.nextFireAfter(from.minusNanos(1), anchor); at != null && !at.isAfter(to);
                        at = s.nextFireAfter(at, anchor)) {
                    if (fires.size() == MAX_FIRES) {
                        throw new InvalidScheduleException("to", "the range holds more than " + MAX_FIRES
                                + " fire times: backfill it in parts");
                    }
                    fires.add(at);
                }
                int made = 0;
                for (Instant fire : fires) {
                    if (firing.backfill(tx, row.schedule(), fire)) {
                        made++;
                    }
                }
                return made;
            });
        } catch (SQLException e) {
            throw new RunStoreException("backfilling schedule " + name + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * One scheduler pass now, as a started scheduler makes every poll: takes the lease (when no other scheduler holds
     * it) and fires what is due. Returns how many fires it handled, or -1 when another scheduler holds the lease.
     */
    public int fireDue() {
        SchedulerLoop once = new SchedulerLoop(dataSource, schema, firing, DEFAULT_POLL, DEFAULT_LEASE);
        try {
            OptionalLong token = once.acquire();
            if (token.isEmpty()) {
                return -1;
            }
            return firing.fireDue(once.holder(), token.getAsLong()).fires();
        } catch (SQLException e) {
            throw new RunStoreException("firing due schedules failed: " + e.getMessage(), e);
        } finally {
            once.close();
        }
    }

    /** Starts this process's scheduler with the defaults ({@link #DEFAULT_POLL}, {@link #DEFAULT_LEASE}). */
    public void startScheduler() {
        startScheduler(DEFAULT_POLL, DEFAULT_LEASE);
    }

    /**
     * Starts this process's scheduler: every {@code poll} it takes or renews the lease, and the holder fires what is
     * due. Starting it twice changes nothing. {@link #close} (and {@link Runs#close}) stops it and gives the lease up.
     */
    public synchronized void startScheduler(Duration poll, Duration leaseTime) {
        Objects.requireNonNull(poll, "poll");
        Objects.requireNonNull(leaseTime, "leaseTime");
        if (poll.compareTo(Duration.ofMillis(10)) < 0 || leaseTime.compareTo(poll.multipliedBy(2)) < 0) {
            throw new IllegalArgumentException("poll must be at least 10 ms and the lease at least two polls, not "
                    + poll + " and " + leaseTime);
        }
        if (scheduler == null) {
            scheduler = new SchedulerLoop(dataSource, schema, firing, poll, leaseTime).start();
        }
    }

    /**
     * This process's scheduler's name in the lease ({@code scheduler_lease.holder}), once started: which process fires
     * is the holder there.
     */
    public synchronized Optional<String> schedulerId() {
        return scheduler == null ? Optional.empty() : Optional.of(scheduler.holder());
    }

    /** Whether this process's scheduler held the lease at its last pass. */
    public boolean leader() {
        SchedulerLoop s = scheduler;
        return s != null && s.leader();
    }

    /** Stops this process's scheduler, if started, and gives its lease up. */
    @Override
    public synchronized void close() {
        if (scheduler != null) {
            scheduler.close();
            scheduler = null;
        }
    }

    private Connection autoCommit() throws SQLException {
        Connection c = dataSource.getConnection();
        c.setAutoCommit(true);
        return c;
    }
}
