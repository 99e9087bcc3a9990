package dev.runbus.runs.internal.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/** The {@code run_effects} table: one row per run and effect name, committed before the effect's call. */
public final class EffectStore {

    /** A recorded effect: its key and, once the call returned, its result. */
    record EffectRow(String idempotencyKey, Optional<String> result) {
    }

    private final DataSource dataSource;
    private final String effects;

    public EffectStore(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.effects = schema + ".run_effects";
    }

    /** Commits the "initiated" row; false when the effect was initiated before. */
    boolean initiateEffect(UUID runId, String name, String key) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO " + effects + " (run_id, name, idempotency_key)"
                     + " VALUES (?, ?, ?) ON CONFLICT (run_id, name) DO NOTHING")) {
            ps.setObject(1, runId);
            ps.setString(2, name);
            ps.setString(3, key);
            return ps.executeUpdate() == 1;
        }
    }

    Optional<EffectRow> effect(UUID runId, String name) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT idempotency_key, result, completed_at FROM " + effects
                     + " WHERE run_id = ? AND name = ?")) {
            ps.setObject(1, runId);
            ps.setString(2, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                boolean completed = rs.getTimestamp(3) != null;
                return Optional.of(new EffectRow(rs.getString(1),
                        completed ? Optional.of(rs.getString(2)) : Optional.empty()));
            }
        }
    }

    void completeEffect(UUID runId, String name, String result) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + effects + " SET result = ?, completed_at = now()"
                     + " WHERE run_id = ? AND name = ?")) {
            ps.setString(1, result);
            ps.setObject(2, runId);
            ps.setString(3, name);
            ps.executeUpdate();
        }
    }

}
