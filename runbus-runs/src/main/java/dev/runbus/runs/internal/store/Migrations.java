package dev.runbus.runs.internal.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the numbered SQL files of {@code dev/runbus/runs/migrations} ({@link MigrationFiles})
 * that the schema has not seen, each in its own transaction, recording them in
 * {@code <schema>.schema_migrations}. Safe to run twice and from several processes at once: a
 * transaction-scoped advisory lock lets one process migrate at a time, and applied versions are skipped.
 */
public final class Migrations {

    private static final Logger log = LoggerFactory.getLogger(Migrations.class);

    private Migrations() {
    }

    /** Returns the names of the migrations applied by this call. */
    public static List<String> apply(DataSource dataSource, String schema) {
        List<String> applied = new ArrayList<>();
        for (String file : MigrationFiles.index()) {
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(false);
                untimed(c);
                try (Statement st = c.createStatement()) {
                    st.execute("SELECT pg_advisory_xact_lock(hashtext('runbus.migrations'))");
                    if (!schemaExists(c, schema)) {
                        // Only when missing: CREATE SCHEMA needs CREATE on the database even with IF NOT EXISTS,
                        // which a migration role that owns an existing schema need not have.
                        st.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
                    }
                    st.execute(MigrationFiles.historyTable(schema));
                    int version = MigrationFiles.versionOf(file);
                    if (appliedVersions(c, schema).contains(version)) {
                        c.rollback();
                        continue;
                    }
                    st.execute(MigrationFiles.migration(file, schema));
                    try (PreparedStatement ps = c.prepareStatement(
                            "INSERT INTO " + schema + ".schema_migrations (version, name) VALUES (?, ?)")) {
                        ps.setInt(1, version);
                        ps.setString(2, file);
                        ps.executeUpdate();
                    }
                }
                c.commit();
                applied.add(file);
                log.info("applied migration {} to schema {}", file, schema);
            } catch (SQLException e) {
                throw new IllegalStateException("migration " + file + " of schema " + schema + " failed: "
                        + e.getMessage() + hintIfNotAllowed(e), e);
            }
        }
        return applied;
    }

    /** The version of the last migration this runbus knows: the one a schema must be at to be used. */
    public static int latestVersion() {
        return MigrationFiles.latestVersion();
    }

    /** For "permission denied" (SQLState 42501): which role to use instead. */
    static String hintIfNotAllowed(SQLException e) {
        if (!"42501".equals(e.getSQLState())) {
            return "";
        }
        return " — this database role may not do it. Create and upgrade the tables with a role that owns the schema"
                + " (runbus migrate), grant this role the runtime rights (RunsSchema.runtimeGrants), and start with"
                + " migrate off (RunsConfig.migrate(false), --no-migrate)";
    }

    /**
     * Creates the index of runs in per-user order ({@code ordered_index.sql}) if it is missing: called by a runs
     * layer configured for order, after {@link #apply}, under the same lock. Not a numbered migration, so that
     * runs that are not ordered do not maintain it.
     */
    public static void applyOrderedIndex(DataSource dataSource, String schema) {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            untimed(c);
            try (Statement st = c.createStatement()) {
                st.execute("SELECT pg_advisory_xact_lock(hashtext('runbus.migrations'))");
                st.execute(MigrationFiles.orderedIndex(schema));
            }
            c.commit();
        } catch (SQLException e) {
            throw new IllegalStateException("creating the ordered-runs index of schema " + schema + " failed: "
                    + e.getMessage() + hintIfNotAllowed(e), e);
        }
    }

    /**
     * No network timeout on a migration's connection: waiting for another process's migration, or rewriting a
     * large table, may rightly take longer than the pool's socket timeout allows an ordinary statement (pools
     * such as HikariCP restore it when the connection comes back).
     */
    private static void untimed(Connection c) throws SQLException {
        try {
            c.setNetworkTimeout(Runnable::run, 0);
        } catch (java.sql.SQLFeatureNotSupportedException e) {
            // a driver without network timeouts has none to lift
        }
    }

    private static boolean schemaExists(Connection c, String schema) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_namespace WHERE nspname = ?")) {
            ps.setString(1, schema);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    static Set<Integer> appliedVersions(Connection c, String schema) throws SQLException {
        Set<Integer> versions = new HashSet<>();
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT version FROM " + schema + ".schema_migrations")) {
            while (rs.next()) {
                versions.add(rs.getInt(1));
            }
        }
        return versions;
    }

    /** The GRANT statements of {@code grants.sql}, for the schema and role; see {@code RunsSchema#runtimeGrants}. */
    public static String runtimeGrants(String schema, String role) {
        return MigrationFiles.grants(schema, role);
    }

    /** The GRANT statements of {@code grants_prune.sql}; see {@code RunsSchema#pruneGrants}. */
    public static String pruneGrants(String schema, String role) {
        return MigrationFiles.pruneGrants(schema, role);
    }
}
