package dev.runbus.runs;

import dev.runbus.runs.internal.store.Migrations;
import dev.runbus.runs.internal.store.SchemaCheck;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The runs tables, for deployments that keep two database roles: a migration role that owns the schema and
 * creates and upgrades the tables ({@link #migrate}), and a runtime role that only reads and writes rows
 * ({@link #runtimeGrants}) and starts its runs layer with {@link RunsConfig#migrate() migrate(false)}. A process
 * that serves requests then cannot change the schema, however it is misused.
 */
public final class RunsSchema {

    private RunsSchema() {
    }

    /**
     * Creates or upgrades the tables of {@code schema} (safe to repeat, and from several processes at once), and
     * the index of ordered runs when {@code ordered}; what {@link Runs#create} does when {@code migrate} is on.
     *
     * @return the migrations this call applied, by file name; empty when the schema was current
     */
    public static List<String> migrate(DataSource dataSource, String schema, boolean ordered) {
        Objects.requireNonNull(dataSource, "dataSource");
        String s = RunsConfig.identifier("schema", schema);
        List<String> applied = Migrations.apply(dataSource, s);
        if (ordered) {
            Migrations.applyOrderedIndex(dataSource, s);
        }
        return applied;
    }

    /**
     * Fails unless {@code schema} has every migration of this runbus (and the index of ordered runs when
     * {@code ordered}); creates nothing. What {@link Runs#create} does when {@code migrate} is off.
     *
     * @throws IllegalStateException saying which version the schema is at, which one is needed, and what to run
     */
    public static void check(DataSource dataSource, String schema, boolean ordered) {
        Objects.requireNonNull(dataSource, "dataSource");
        SchemaCheck.check(dataSource, RunsConfig.identifier("schema", schema), ordered);
    }

    /** The version a schema must be at for this runbus: its last migration's number. */
    public static int version() {
        return Migrations.latestVersion();
    }

    /**
     * The GRANT statements that let {@code role} run a runs layer on {@code schema} and do nothing else: USAGE on
     * the schema, SELECT, INSERT and UPDATE on the runs tables, USAGE on the submission sequence, SELECT on the
     * migrations table (to check the version). Run them as the migration role after each migration.
     *
     * @param role a lower-case SQL identifier, like the schema
     */
    public static String runtimeGrants(String schema, String role) {
        return Migrations.runtimeGrants(RunsConfig.identifier("schema", schema), RunsConfig.identifier("role", role));
    }
}
