package dev.runbus.runs;

import dev.runbus.runs.internal.store.MigrationFiles;
import dev.runbus.runs.internal.store.Migrations;
import dev.runbus.runs.internal.store.SchemaCheck;
import dev.runbus.runs.internal.store.SqlIdentifier;
import dev.runbus.runs.internal.store.ToolScript;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The runs tables, for deployments that keep two database roles: a migration role that owns the schema and
 * creates and upgrades the tables ({@link #migrate}), and a runtime role that only reads and writes rows
 * ({@link #runtimeGrants}) and starts its runs layer with {@link RunsConfig#migrate() migrate(false)}. A process
 * that serves requests then cannot change the schema, however it is misused. The migration role may also be a
 * migration tool's: {@link #scripts} are the migrations as plain SQL for it to apply.
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

    /**
     * One migration as plain SQL for one schema, for a migration tool to apply in {@link #scripts}' order.
     *
     * @param version runbus's number of the migration, the one recorded in {@code schema_migrations}
     * @param name    runbus's file name of it, such as {@code V001__runs.sql}
     * @param sql     the statements, with the schema written in; dollar-quoted function bodies included
     */
    public record Script(int version, String name, String sql) {
    }

    /**
     * The migrations as plain SQL for {@code schema}, in the order to apply them, for a migration tool (Flyway,
     * Liquibase, psql) that builds the tables instead of runbus ({@code ExportMigrations} writes them as files).
     * Each script creates the schema and {@code schema_migrations} when they are missing and records its own
     * version there in the same transaction: what {@link #check}, and a runs layer with migrate off, read. A schema
     * that runbus's own migration built has the same records, so either may carry on after the other.
     */
    public static List<Script> scripts(String schema) {
        String s = SqlIdentifier.check("schema", schema);
        List<Script> scripts = new ArrayList<>();
        for (String file : MigrationFiles.index()) {
            scripts.add(new Script(MigrationFiles.versionOf(file), file, ToolScript.of(file, s)));
        }
        return List.copyOf(scripts);
    }

    /**
     * The index of runs in per-user order as plain SQL for {@code schema}, for a migration tool to apply after
     * {@link #scripts} when the runs are ordered ({@link RunsConfig#ordered()}): a runs layer with migrate off
     * checks for it. Applying it again changes nothing.
     */
    public static String orderedIndexScript(String schema) {
        return ToolScript.orderedIndex(SqlIdentifier.check("schema", schema));
    }

    /**
     * The GRANT statements that let {@code role} delete finished runs ({@link Runs#deleteFinished}, {@code runbus runs
     * prune}) and do nothing else: USAGE on the schema, SELECT on the migrations table (to check the version), SELECT
     * and DELETE on the runs, their replies and their effects. The runtime role has no DELETE; give this to the role
     * of the job that prunes, and run them as the migration role after each migration.
     *
     * @param role a lower-case SQL identifier, like the schema
     */
    public static String pruneGrants(String schema, String role) {
        return Migrations.pruneGrants(RunsConfig.identifier("schema", schema), RunsConfig.identifier("role", role));
    }
}
