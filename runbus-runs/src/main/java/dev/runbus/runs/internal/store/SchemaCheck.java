package dev.runbus.runs.internal.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Set;
import javax.sql.DataSource;

/**
 * What a runs layer that may not create tables does instead of {@link Migrations#apply}: makes sure the schema is
 * already at this runbus's version, and otherwise says what to run, so that a runtime role never meets a missing
 * column in the middle of a run.
 */
public final class SchemaCheck {

    private SchemaCheck() {
    }

    /**
     * Checks, without creating anything, that the schema has every migration of this runbus (and, for ordered
     * runs, their index): what a runs layer that may not create tables does instead of {@link Migrations#apply}.
     *
     * @throws IllegalStateException naming the schema, the version it is at and the one needed, and what to run
     */
    public static void check(DataSource dataSource, String schema, boolean ordered) {
        int needed = Migrations.latestVersion();
        Set<Integer> applied;
        try (Connection c = dataSource.getConnection()) {
            applied = Migrations.appliedVersions(c, schema);
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState()) || "3F000".equals(e.getSQLState())) { // no such table, no such schema
                throw new IllegalStateException("schema " + schema + " has no runs tables (no " + schema
                        + ".schema_migrations), this runbus needs version " + needed + ": " + RUN_THE_MIGRATION, e);
            }
            throw new IllegalStateException("cannot read the migrations applied to schema " + schema + ": "
                    + e.getMessage() + Migrations.hintIfNotAllowed(e), e);
        }
        int at = applied.stream().mapToInt(Integer::intValue).max().orElse(0);
        for (String file : MigrationFiles.index()) {
            if (!applied.contains(MigrationFiles.versionOf(file))) {
                throw new IllegalStateException("schema " + schema + " is at version " + at + ", this runbus needs "
                        + needed + " (" + file + " is not applied): " + RUN_THE_MIGRATION);
            }
        }
        if (ordered && !hasOrderedIndex(dataSource, schema)) {
            throw new IllegalStateException("schema " + schema + " has no index of ordered runs (runs_user_unfinished_idx),"
                    + " which runs in per-user order need: run the migration for ordered runs with a role that may"
                    + " create tables — runbus migrate --ordered, or serve --ordered without --no-migrate");
        }
    }

    private static final String RUN_THE_MIGRATION = "run the migration with a role that may create tables — runbus"
            + " migrate, or serve without --no-migrate (RunsConfig.migrate(true)), or have a migration tool apply"
            + " RunsSchema.scripts (ExportMigrations writes them as files)";

    private static boolean hasOrderedIndex(DataSource dataSource, String schema) {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, schema + ".runs_user_unfinished_idx");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot look for the index of ordered runs in schema " + schema + ": "
                    + e.getMessage(), e);
        }
    }

}
