package dev.runbus.runs.internal.store;

import dev.runbus.FlowRate;
import dev.runbus.runs.FlowOverride;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The flow keys' overrides in {@code flow_overrides} (migration V012): one row per key, NULLs for the workers'. A
 * write and the Redis step that follows it, and a sweep's setting them all again, each run in a transaction holding
 * the table's advisory lock ({@link #locked}), so that a sweep never sets a key back to a value an operator just
 * replaced.
 */
public final class FlowOverrideStore {

    private static final Logger log = LoggerFactory.getLogger(FlowOverrideStore.class);

    private final DataSource dataSource;
    private final String table;

    public FlowOverrideStore(DataSource dataSource, String schema) {
        this.dataSource = AutoCommitDataSource.of(dataSource);
        this.table = schema + ".flow_overrides";
    }

    /** Runs {@code work} in one transaction that holds the overrides' lock until it ends. */
    public <T> T locked(Transactions.Work<T> work) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return Transactions.in(c, tx -> {
                try (PreparedStatement ps = tx.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?))")) {
                    ps.setString(1, "runbus.flow_overrides." + table);
                    ps.execute();
                }
                return work.on(tx);
            });
        }
    }

    /** Writes {@code flowKey}'s override (all NULL for {@link FlowOverride#none()}) in {@code c}'s transaction. */
    public void put(Connection c, String flowKey, FlowOverride o) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
                + " (flow_key, cap, rate_permits, rate_per_micros, rate_burst, weight) VALUES (?, ?, ?, ?, ?, ?)"
                + " ON CONFLICT (flow_key) DO UPDATE SET cap = excluded.cap,"
                + " rate_permits = excluded.rate_permits, rate_per_micros = excluded.rate_per_micros,"
                + " rate_burst = excluded.rate_burst, weight = excluded.weight, updated_at = now()")) {
            ps.setString(1, flowKey);
            setInt(ps, 2, o.cap());
            setInt(ps, 3, o.rate() == null ? null : o.rate().permits());
            if (o.rate() == null) {
                ps.setNull(4, Types.BIGINT);
            } else {
                ps.setLong(4, o.rate().per().toNanos() / 1_000);
            }
            setInt(ps, 5, o.rate() == null ? null : o.rate().burst());
            if (o.weight() == null) {
                ps.setNull(6, Types.DOUBLE);
            } else {
                ps.setDouble(6, o.weight());
            }
            ps.executeUpdate();
        }
    }

    /**
     * The keys with an override of their own (not set back to the workers'), by key, the first {@code limit} after
     * {@code after} (null: from the first).
     */
    public Map<String, FlowOverride> page(String after, int limit) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return page(c, after, limit);
        }
    }

    /** {@link #page(String, int)} on {@code c}. */
    public Map<String, FlowOverride> page(Connection c, String after, int limit) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT flow_key, cap, rate_permits, rate_per_micros,"
                + " rate_burst, weight FROM " + table + " WHERE flow_key > ? AND (cap IS NOT NULL"
                + " OR rate_permits IS NOT NULL OR weight IS NOT NULL) ORDER BY flow_key LIMIT ?")) {
            ps.setString(1, after == null ? "" : after);
            ps.setInt(2, limit);
            try (ResultSet rs = ps.executeQuery()) {
                return read(rs);
            }
        }
    }

    /** The rows as overrides; a row no override can be made of (written by hand) is reported and left out. */
    private static Map<String, FlowOverride> read(ResultSet rs) throws SQLException {
        Map<String, FlowOverride> out = new LinkedHashMap<>();
        while (rs.next()) {
            String key = rs.getString(1);
            try {
                Integer cap = (Integer) rs.getObject(2);
                Integer permits = (Integer) rs.getObject(3);
                FlowRate rate = permits == null ? null
                        : new FlowRate(permits, Duration.ofNanos(rs.getLong(4) * 1_000), rs.getInt(5));
                Double weight = (Double) rs.getObject(6);
                out.put(key, new FlowOverride(cap, rate, weight));
            } catch (IllegalArgumentException | ArithmeticException bad) {
                log.warn("flow override of key {} left out: {}", key, bad.getMessage());
            }
        }
        return out;
    }

    private static void setInt(PreparedStatement ps, int i, Integer v) throws SQLException {
        if (v == null) {
            ps.setNull(i, Types.INTEGER);
        } else {
            ps.setInt(i, v);
        }
    }
}
