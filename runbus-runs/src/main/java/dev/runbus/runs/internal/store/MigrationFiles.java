package dev.runbus.runs.internal.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The SQL templates in this jar, each with {@code ${schema}} (and the grants {@code ${role}}) to replace: the
 * numbered migrations of {@code dev/runbus/runs/migrations} in the order of its {@code index.txt}, the index of
 * ordered runs, the runtime grants and a pruning role's grants. Loads nothing but this jar's resources.
 */
public final class MigrationFiles {

    private static final String FOLDER = "/dev/runbus/runs/migrations/";
    /** The templates' note, which a comment may wrap onto the next line. */
    private static final String TEMPLATE_NOTE =
            "\\$\\{schema\\} is replaced(?: by RunsConfig\\.schema)?(?:\\s+--)?\\s+when(?:\\s+--)?\\s+applied\\.";

    private MigrationFiles() {
    }

    /** The migration files, in the order they are applied. */
    public static List<String> index() {
        List<String> files = new ArrayList<>();
        for (String line : readResource(FOLDER + "index.txt").split("\n")) {
            String l = line.trim();
            if (!l.isEmpty() && !l.startsWith("#")) {
                files.add(l);
            }
        }
        return files;
    }

    /** {@code V001__runs.sql} is version 1. */
    public static int versionOf(String file) {
        if (!file.matches("V\\d+__.+\\.sql")) {
            throw new IllegalStateException("migration file name must look like V001__name.sql: " + file);
        }
        return Integer.parseInt(file.substring(1, file.indexOf("__")));
    }

    /** The version of the last migration: the one a schema must be at to be used. */
    public static int latestVersion() {
        List<String> files = index();
        return versionOf(files.get(files.size() - 1));
    }

    /** Migration {@code file} written for {@code schema}. */
    public static String migration(String file, String schema) {
        return readResource(FOLDER + file).replace("${schema}", schema);
    }

    /**
     * Migration {@code file} written for {@code schema} with its comments saying so: the templates' note that
     * "${schema} is replaced when applied" becomes "Written for schema s.", for a file that a person reads.
     */
    public static String migrationAsWritten(String file, String schema) {
        return readResource(FOLDER + file).replaceAll(TEMPLATE_NOTE, "Written for schema " + schema + ".")
                .replace("${schema}", schema);
    }

    /** {@code ordered_index.sql} written for {@code schema}, its comments saying so. */
    public static String orderedIndexAsWritten(String schema) {
        return readResource("/dev/runbus/runs/ordered_index.sql").replaceAll(TEMPLATE_NOTE,
                "Written for schema " + schema + ".").replace("${schema}", schema);
    }

    /** The table where a schema's applied migrations are recorded, one row per version. */
    public static String historyTable(String schema) {
        return "CREATE TABLE IF NOT EXISTS " + schema + ".schema_migrations (version INTEGER PRIMARY KEY,"
                + " name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())";
    }

    /** {@code ordered_index.sql} written for {@code schema}. */
    public static String orderedIndex(String schema) {
        return readResource("/dev/runbus/runs/ordered_index.sql").replace("${schema}", schema);
    }

    /** {@code grants.sql} written for {@code schema} and {@code role}. */
    public static String grants(String schema, String role) {
        return readResource("/dev/runbus/runs/grants.sql").replace("${schema}", schema).replace("${role}", role);
    }

    /** {@code grants_prune.sql} written for {@code schema} and {@code role}. */
    public static String pruneGrants(String schema, String role) {
        return readResource("/dev/runbus/runs/grants_prune.sql").replace("${schema}", schema).replace("${role}", role);
    }

    private static String readResource(String path) {
        try (InputStream in = MigrationFiles.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing migration resource " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + path, e);
        }
    }
}
