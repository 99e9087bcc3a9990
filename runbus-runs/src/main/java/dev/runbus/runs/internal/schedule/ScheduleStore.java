package dev.runbus.runs.internal.schedule;

import dev.runbus.runs.CronExpression;
import dev.runbus.runs.MisfirePolicy;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.OverlapPolicy;
import dev.runbus.runs.Schedule;
import dev.runbus.runs.ScheduleState;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;

/** The SQL of schedules (migration V018): their definitions and state, their fires, and the scheduler's lease. */
public final class ScheduleStore {

    private static final String COLUMNS = "name, cron, interval_ms, zone, jitter_ms, starts_at, ends_at, paused, "
            + "overlap, overlap_buffer, misfire, catch_up_max, catch_up_window_ms, misfire_grace_ms, session_id, "
            + "user_id, input, flow_key, priority, flow_sub_key, timeout_ms, expire_after_ms";
    private static final String STATE = COLUMNS + ", anchor_at, next_fire_at, last_fire_at, fired, skipped_overlap, "
            + "missed, caught_up, created_at, updated_at, (SELECT count(*) FROM %s.schedule_fires f WHERE "
            + "f.schedule_name = s.name AND f.outcome = 'buffered') AS waiting";
    /** The runs a fire looks at for overlap: its schedule's latest fires that made one. */
    static final int OVERLAP_LOOKBACK = 100;

    private final String schema;

    public ScheduleStore(String schema) {
        this.schema = schema;
    }

    /** A schedule as stored, with where an interval counts from. */
    public record Row(Schedule schedule, Instant anchor, Instant nextFireAt) {
    }

    /**
     * Inserts the schedule, or takes the place of a deleted one of its name; with {@code replace}, also of a live one
     * (keeping its counters, fires and anchor). Returns false when a live one exists and {@code replace} is off.
     */
    public boolean put(Connection c, Schedule s, Instant now, boolean replace) throws SQLException {
        Instant anchor = now.truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        Instant existingAnchor = null;
        Instant existingNext = null;
        boolean live = false;
        try (PreparedStatement ps = c.prepareStatement("SELECT anchor_at, deleted_at IS NULL, next_fire_at FROM "
                + schema + ".schedules WHERE name = ? FOR UPDATE")) {
            ps.setString(1, s.name());
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    existingAnchor = instant(rs, 1);
                    live = rs.getBoolean(2);
                    existingNext = instant(rs, 3);
                }
            }
        }
        if (live && !replace) {
            return false;
        }
        if (live) {
            anchor = existingAnchor;
        }
        // A fire that is due and not made yet stays due: the scheduler makes it, or its misfire policy decides.
        Instant from = live && existingNext != null && !existingNext.isAfter(now) ? existingNext.minusNanos(1) : now;
        Instant next = s.paused() ? null : s.nextFireAfter(from, anchor);
        String sql = existingAnchor == null
                ? "INSERT INTO " + schema + ".schedules (" + COLUMNS + ", anchor_at, next_fire_at) VALUES ("
                        + "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING"
                : "UPDATE " + schema + ".schedules SET (" + COLUMNS + ", anchor_at, next_fire_at) = ("
                        + "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), updated_at = now()"
                        + (live ? "" : ", deleted_at = NULL, last_fire_at = NULL, fired = 0, skipped_overlap = 0, "
                                + "missed = 0, caught_up = 0, created_at = now()")
                        + " WHERE name = ?";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int i = bindDefinition(ps, s);
            setInstant(ps, ++i, anchor);
            setInstant(ps, ++i, next);
            if (existingAnchor != null) {
                ps.setString(++i, s.name());
            }
            if (ps.executeUpdate() == 0) { // another put of the name inserted it first: as if it had been there
                return replace && put(c, s, now, true);
            }
        }
        return true;
    }

    private static int bindDefinition(PreparedStatement ps, Schedule s) throws SQLException {
        int i = 0;
        ps.setString(++i, s.name());
        ps.setString(++i, s.cron() == null ? null : s.cron().toString());
        setLong(ps, ++i, s.interval() == null ? null : s.interval().toMillis());
        ps.setString(++i, s.zone().getId());
        ps.setLong(++i, s.jitter().toMillis());
        setInstant(ps, ++i, s.startAt());
        setInstant(ps, ++i, s.endAt());
        ps.setBoolean(++i, s.paused());
        ps.setString(++i, s.overlap().kind().name().toLowerCase(Locale.ROOT));
        ps.setInt(++i, s.overlap().buffer());
        ps.setString(++i, s.misfire().kind().name().toLowerCase(Locale.ROOT));
        ps.setInt(++i, s.misfire().catchUpMax());
        ps.setLong(++i, s.misfire().catchUpWindow().toMillis());
        ps.setLong(++i, s.misfire().grace().toMillis());
        NewRun r = s.run();
        ps.setString(++i, r.sessionId());
        ps.setString(++i, r.userId());
        ps.setString(++i, r.input());
        ps.setString(++i, r.flowKey());
        ps.setInt(++i, r.priority());
        ps.setString(++i, r.flowSubKey());
        setLong(ps, ++i, r.timeout() == null ? null : r.timeout().toMillis());
        setLong(ps, ++i, r.expireAfter() == null ? null : r.expireAfter().toMillis());
        return i;
    }

    public Optional<ScheduleState> get(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + STATE.formatted(schema) + " FROM " + schema
                + ".schedules s WHERE name = ? AND deleted_at IS NULL")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(state(rs)) : Optional.empty();
            }
        }
    }

    /** Up to {@code limit} live schedules after {@code afterName} (null: from the first), by name. */
    public List<ScheduleState> list(Connection c, String afterName, int limit) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + STATE.formatted(schema) + " FROM " + schema
                + ".schedules s WHERE deleted_at IS NULL AND name > ? ORDER BY name LIMIT ?")) {
            ps.setString(1, afterName == null ? "" : afterName);
            ps.setInt(2, limit);
            List<ScheduleState> page = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    page.add(state(rs));
                }
            }
            return page;
        }
    }

    /**
     * Marks a live schedule deleted: it fires no more, its fires stay, and those still buffered are dropped (a schedule
     * made again under its name does not inherit them). False when there is none.
     */
    public boolean delete(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".schedules SET deleted_at = now(), "
                + "next_fire_at = NULL, updated_at = now() WHERE name = ? AND deleted_at IS NULL")) {
            ps.setString(1, name);
            if (ps.executeUpdate() == 0) {
                return false;
            }
        }
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".schedule_fires SET outcome = "
                + "'dropped' WHERE schedule_name = ? AND outcome = 'buffered'")) {
            ps.setString(1, name);
            ps.executeUpdate();
        }
        return true;
    }

    /** A live schedule as stored, with its anchor, unlocked; empty when there is none. */
    public Optional<Row> find(Connection c, String name) throws SQLException {
        return row(c, name, "");
    }

    private Optional<Row> row(Connection c, String name, String lock) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS + ", anchor_at, next_fire_at FROM "
                + schema + ".schedules WHERE name = ? AND deleted_at IS NULL" + lock)) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new Row(definition(rs), instant(rs, 23), instant(rs, 24)))
                        : Optional.empty();
            }
        }
    }

    /** Locks a live schedule for a change of its state; empty when there is none. */
    public Optional<Row> lock(Connection c, String name) throws SQLException {
        return row(c, name, " FOR UPDATE");
    }


    /** Sets a locked schedule paused or not, with its next fire time (null while paused). */
    public void setPaused(Connection c, String name, boolean paused, Instant next) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".schedules SET paused = ?, "
                + "next_fire_at = ?, updated_at = now() WHERE name = ?")) {
            ps.setBoolean(1, paused);
            setInstant(ps, 2, next);
            ps.setString(3, name);
            ps.executeUpdate();
        }
    }

    /** The names and fire times of up to {@code limit} schedules due at {@code now}, the most overdue first. */
    List<Row> due(Connection c, Instant now, int limit) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS + ", anchor_at, next_fire_at FROM "
                + schema + ".schedules WHERE next_fire_at <= ? AND NOT paused AND deleted_at IS NULL "
                + "ORDER BY next_fire_at LIMIT ?")) {
            setInstant(ps, 1, now);
            ps.setInt(2, limit);
            List<Row> due = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    due.add(new Row(definition(rs), instant(rs, 23), instant(rs, 24)));
                }
            }
            return due;
        }
    }

    /**
     * Locks the schedule if it is still due at {@code fireAt} (the compare-and-set of a fire: another firer moved it
     * on, or it was paused, deleted or changed, and this returns empty).
     */
    Optional<Row> lockDue(Connection c, String name, Instant fireAt) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS + ", anchor_at, next_fire_at FROM "
                + schema + ".schedules WHERE name = ? AND next_fire_at = ? AND NOT paused AND deleted_at IS NULL "
                + "FOR UPDATE")) {
            ps.setString(1, name);
            setInstant(ps, 2, fireAt);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new Row(definition(rs), instant(rs, 23), instant(rs, 24)))
                        : Optional.empty();
            }
        }
    }

    /** The runs of the schedule's latest fires that are not finished (pending, running or cancelling). */
    List<UUID> unfinishedRuns(Connection c, String name) throws SQLException {
        // Only this life's fires: a schedule deleted and made again under its name is not held back by the old runs.
        try (PreparedStatement ps = c.prepareStatement("SELECT r.id FROM (SELECT f.run_id FROM " + schema
                + ".schedule_fires f JOIN " + schema + ".schedules s ON s.name = f.schedule_name "
                + "WHERE f.schedule_name = ? AND f.run_id IS NOT NULL AND f.created_at >= s.created_at "
                + "ORDER BY f.fire_at DESC LIMIT " + OVERLAP_LOOKBACK + ") f JOIN " + schema + ".runs r "
                + "ON r.id = f.run_id WHERE r.status IN ('pending', 'running')")) {
            ps.setString(1, name);
            List<UUID> ids = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getObject(1, UUID.class));
                }
            }
            return ids;
        }
    }

    /** The schedule's buffered fires, oldest first. */
    List<Instant> buffered(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT fire_at FROM " + schema + ".schedule_fires "
                + "WHERE schedule_name = ? AND outcome = 'buffered' ORDER BY fire_at")) {
            ps.setString(1, name);
            List<Instant> fires = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    fires.add(instant(rs, 1));
                }
            }
            return fires;
        }
    }

    /** The live schedules, not paused, that have buffered fires. */
    List<String> withBuffered(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT DISTINCT f.schedule_name FROM " + schema
                + ".schedule_fires f JOIN " + schema + ".schedules s ON s.name = f.schedule_name "
                + "WHERE f.outcome = 'buffered' AND s.deleted_at IS NULL AND NOT s.paused")) {
            List<String> names = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1));
                }
            }
            return names;
        }
    }

    /**
     * Claims a fire, before its run is made ({@link #fireMade} gives it the run): false when the schedule already has
     * one at that time (fired, caught up or backfilled before, even if its run was deleted since), and then no run is
     * made for it again.
     */
    public boolean insertFire(Connection c, String name, Instant fireAt, UUID runId, String outcome, long token)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + schema + ".schedule_fires (schedule_name, "
                + "fire_at, run_id, outcome, token) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")) {
            ps.setString(1, name);
            setInstant(ps, 2, fireAt);
            ps.setObject(3, runId);
            ps.setString(4, outcome);
            ps.setLong(5, token);
            return ps.executeUpdate() == 1;
        }
    }

    /** Gives a claimed fire its run. */
    void fireMade(Connection c, String name, Instant fireAt, UUID runId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".schedule_fires SET run_id = ? "
                + "WHERE schedule_name = ? AND fire_at = ?")) {
            ps.setObject(1, runId);
            ps.setString(2, name);
            setInstant(ps, 3, fireAt);
            ps.executeUpdate();
        }
    }

    /** Gives a buffered fire its run. */
    void bufferedMade(Connection c, String name, Instant fireAt, UUID runId, long token) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".schedule_fires SET outcome = 'fired', "
                + "run_id = ?, token = ? WHERE schedule_name = ? AND fire_at = ? AND outcome = 'buffered'")) {
            ps.setObject(1, runId);
            ps.setLong(2, token);
            ps.setString(3, name);
            setInstant(ps, 4, fireAt);
            ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".schedules SET fired = fired + 1, "
                + "updated_at = now() WHERE name = ?")) {
            ps.setString(1, name);
            ps.executeUpdate();
        }
    }

    /** Moves a locked schedule on to its next fire, adding to its counters. */
    void advance(Connection c, String name, Instant next, Instant lastFire, long fired, long skippedOverlap,
                 long missed, long caughtUp) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".schedules SET next_fire_at = ?, "
                + "last_fire_at = coalesce(?, last_fire_at), fired = fired + ?, skipped_overlap = skipped_overlap + ?, "
                + "missed = missed + ?, caught_up = caught_up + ?, updated_at = now() WHERE name = ?")) {
            setInstant(ps, 1, next);
            setInstant(ps, 2, lastFire);
            ps.setLong(3, fired);
            ps.setLong(4, skippedOverlap);
            ps.setLong(5, missed);
            ps.setLong(6, caughtUp);
            ps.setString(7, name);
            ps.executeUpdate();
        }
    }

    /**
     * Takes the scheduler's lease for {@code holder}, or renews it: returns its fencing token, or empty when another
     * holds it unexpired. A new holder gets the token after the last.
     */
    java.util.OptionalLong acquire(Connection c, String holder, Duration ttl) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".scheduler_lease SET "
                + "token = CASE WHEN holder = ? AND expires_at > now() THEN token ELSE token + 1 END, holder = ?, "
                + "expires_at = now() + ? * interval '1 millisecond' "
                + "WHERE id = 1 AND (holder = ? AND expires_at > now() OR expires_at <= now()) RETURNING token")) {
            ps.setString(1, holder);
            ps.setString(2, holder);
            ps.setLong(3, ttl.toMillis());
            ps.setString(4, holder);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? java.util.OptionalLong.of(rs.getLong(1)) : java.util.OptionalLong.empty();
            }
        }
    }

    /** Ends {@code holder}'s lease at once, so that another scheduler takes over without waiting for it to expire. */
    void release(Connection c, String holder) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".scheduler_lease SET "
                + "expires_at = now() WHERE id = 1 AND holder = ? AND expires_at > now()")) {
            ps.setString(1, holder);
            ps.executeUpdate();
        }
    }

    /**
     * In a firing transaction: locks the lease row while {@code holder} holds it unexpired with {@code token}, so that
     * no other can take it before this transaction ends; false when the lease was lost (then nothing may be fired).
     */
    boolean fence(Connection c, String holder, long token) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + schema + ".scheduler_lease WHERE id = 1 "
                + "AND holder = ? AND token = ? AND expires_at > now() FOR SHARE")) {
            ps.setString(1, holder);
            ps.setLong(2, token);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    private ScheduleState state(ResultSet rs) throws SQLException {
        return new ScheduleState(definition(rs), instant(rs, 24), instant(rs, 25), rs.getLong(26), rs.getLong(27),
                rs.getLong(28), rs.getLong(29), rs.getLong(32), instant(rs, 30), instant(rs, 31));
    }

    /** The definition from the first 22 columns ({@link #COLUMNS}). */
    private static Schedule definition(ResultSet rs) throws SQLException {
        String cron = rs.getString(2);
        long interval = rs.getLong(3);
        Duration every = rs.wasNull() ? null : Duration.ofMillis(interval);
        Long timeout = longOrNull(rs, 21);
        Long expireAfter = longOrNull(rs, 22);
        NewRun run = new NewRun(rs.getString(15), rs.getString(16), rs.getString(17), null, rs.getString(18),
                rs.getInt(19), rs.getString(20), expireAfter == null ? null : Duration.ofMillis(expireAfter),
                timeout == null ? null : Duration.ofMillis(timeout));
        OverlapPolicy overlap = OverlapPolicy.of(OverlapPolicy.Kind.valueOf(rs.getString(9).toUpperCase(Locale.ROOT)),
                rs.getInt(10));
        MisfirePolicy misfire = MisfirePolicy.of(MisfirePolicy.Kind.valueOf(rs.getString(11).toUpperCase(Locale.ROOT)),
                rs.getInt(12), Duration.ofMillis(rs.getLong(13)), Duration.ofMillis(rs.getLong(14)));
        return new Schedule(rs.getString(1), cron == null ? null : CronExpression.parse(cron), every,
                ZoneId.of(rs.getString(4)), Duration.ofMillis(rs.getLong(5)), instant(rs, 6), instant(rs, 7),
                rs.getBoolean(8), overlap, misfire, run);
    }

    private static Long longOrNull(ResultSet rs, int column) throws SQLException {
        long v = rs.getLong(column);
        return rs.wasNull() ? null : v;
    }

    static Instant instant(ResultSet rs, int column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    static void setInstant(PreparedStatement ps, int index, Instant at) throws SQLException {
        if (at == null) {
            ps.setNull(index, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
            ps.setObject(index, OffsetDateTime.ofInstant(at, ZoneOffset.UTC));
        }
    }

    private static void setLong(PreparedStatement ps, int index, Long value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.BIGINT);
        } else {
            ps.setLong(index, value);
        }
    }
}
