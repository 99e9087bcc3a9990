package dev.runbus.runs.internal.store;

/**
 * A migration as plain SQL for a migration tool (Flyway, Liquibase, psql) to apply instead of runbus. Besides the
 * migration itself, each script makes the schema and its {@code schema_migrations} table when they are missing and
 * records its own version there, in the transaction the tool runs it in: a runs layer started with migrate off
 * checks that table ({@link SchemaCheck}), whichever tool applied the script and under whatever version the tool
 * numbers it. The record is the one {@link Migrations#apply} makes, so runbus's own migration skips what a tool
 * applied, and the other way round the tool is told by {@code ExportMigrations --after}.
 */
public final class ToolScript {

    private ToolScript() {
    }

    /** Migration {@code file} (one of {@link MigrationFiles#index()}) for {@code schema}. */
    public static String of(String file, String schema) {
        int version = MigrationFiles.versionOf(file);
        return "-- runbus runs migration " + file + " for schema " + schema + ", as plain SQL for a migration tool.\n"
                + "-- It records itself in " + schema + ".schema_migrations, where a runs layer started with migrate off\n"
                + "-- checks the schema's version. Written by RunsSchema.scripts; do not edit.\n"
                + schemaIfMissing(schema)
                + MigrationFiles.historyTable(schema) + ";\n\n"
                + MigrationFiles.migrationAsWritten(file, schema).strip() + "\n\n"
                + "INSERT INTO " + schema + ".schema_migrations (version, name) VALUES (" + version + ", '" + file
                + "')\n    ON CONFLICT (version) DO NOTHING;\n";
    }

    /** The index of ordered runs for {@code schema}, which a runs layer in per-user order also checks for. */
    public static String orderedIndex(String schema) {
        return "-- runbus: the index of runs in per-user order (RunsConfig.ordered) for schema " + schema + ".\n"
                + "-- Written by RunsSchema.orderedIndexScript; do not edit.\n"
                + MigrationFiles.orderedIndexAsWritten(schema).strip() + "\n";
    }

    /**
     * Not CREATE SCHEMA IF NOT EXISTS: that needs CREATE on the database even when the schema exists, which a role
     * that owns an existing schema need not have (as in {@link Migrations#apply}).
     */
    private static String schemaIfMissing(String schema) {
        return "DO $runbus$ BEGIN\n"
                + "    IF NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = '" + schema + "') THEN\n"
                + "        CREATE SCHEMA " + schema + ";\n"
                + "    END IF;\n"
                + "END $runbus$;\n";
    }
}
