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

/** The flow keys' overrides in {@code flow_overrides} (migration V012): one row per key, NULLs for the workers'. */
public final class FlowOverrideStore {

    private final DataSource dataSource;
    private final String table;

    public FlowOverrideStore(DataSource dataSource, String schema) {
        this.dataSource = AutoCommitDataSource.of(dataSource);
        this.table = schema + ".flow_overrides";
    }

    /** Writes {@code flowKey}'s override (all NULL for {@link FlowOverride#none()}), committed when it returns. */
    public void put(String flowKey, FlowOverride o) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
                     + " (flow_key, cap, rate_permits, rate_per_ms, rate_burst, weight) VALUES (?, ?, ?, ?, ?, ?)"
                     + " ON CONFLICT (flow_key) DO UPDATE SET cap = excluded.cap,"
                     + " rate_permits = excluded.rate_permits, rate_per_ms = excluded.rate_per_ms,"
                     + " rate_burst = excluded.rate_burst, weight = excluded.weight, updated_at = now()")) {
            ps.setString(1, flowKey);
            setInt(ps, 2, o.cap());
            setInt(ps, 3, o.rate() == null ? null : o.rate().permits());
            if (o.rate() == null) {
                ps.setNull(4, Types.BIGINT);
            } else {
                ps.setLong(4, o.rate().per().toMillis());
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

    /** Every key's override, those set back to the workers' included, by key. */
    public Map<String, FlowOverride> all() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT flow_key, cap, rate_permits, rate_per_ms, rate_burst,"
                     + " weight FROM " + table + " ORDER BY flow_key");
             ResultSet rs = ps.executeQuery()) {
            return read(rs);
        }
    }

    /**
     * The keys with an override of their own (not set back to the workers'), by key, the first {@code limit} after
     * {@code after} (null: from the first).
     */
    public Map<String, FlowOverride> page(String after, int limit) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT flow_key, cap, rate_permits, rate_per_ms, rate_burst,"
                     + " weight FROM " + table + " WHERE flow_key > ? AND (cap IS NOT NULL OR rate_permits IS NOT NULL"
                     + " OR weight IS NOT NULL) ORDER BY flow_key LIMIT ?")) {
            ps.setString(1, after == null ? "" : after);
            ps.setInt(2, limit);
            try (ResultSet rs = ps.executeQuery()) {
                return read(rs);
            }
        }
    }

    private static Map<String, FlowOverride> read(ResultSet rs) throws SQLException {
        Map<String, FlowOverride> out = new LinkedHashMap<>();
        while (rs.next()) {
            Integer cap = (Integer) rs.getObject(2);
            Integer permits = (Integer) rs.getObject(3);
            FlowRate rate = permits == null ? null
                    : new FlowRate(permits, Duration.ofMillis(rs.getLong(4)), rs.getInt(5));
            Double weight = (Double) rs.getObject(6);
            out.put(rs.getString(1), new FlowOverride(cap, rate, weight));
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
