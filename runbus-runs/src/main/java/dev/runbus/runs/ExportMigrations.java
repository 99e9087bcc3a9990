package dev.runbus.runs;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes the runs layer's migrations ({@link RunsSchema#scripts}) as files a migration tool applies, named as
 * Flyway wants them: {@code V<n>__runbus_<name>.sql}, {@code n} counting from {@code --first-version} so that they
 * follow the application's own migrations. Needs nothing but this jar on the class path:
 *
 * <pre>java -cp runbus-runs.jar dev.runbus.runs.ExportMigrations --schema runbus --first-version 20 --out DIR</pre>
 *
 * <p>After an upgrade of runbus, {@code --after N} (N: the highest version in the schema's
 * {@code schema_migrations}) writes only the migrations the schema lacks.
 */
public final class ExportMigrations {

    static final String USAGE = "usage: java -cp runbus-runs.jar dev.runbus.runs.ExportMigrations --out DIR"
            + " [--schema NAME] [--first-version N] [--after N] [--ordered]\n"
            + "  --out DIR           the folder to write the scripts into (made if missing; existing files are kept)\n"
            + "  --schema NAME       the PostgreSQL schema of the runs tables (default runbus)\n"
            + "  --first-version N   the version of the first file written, V<N>__runbus_<name>.sql (default 1)\n"
            + "  --after N           only runbus's migrations numbered above N: those a schema at version N lacks"
            + " (default 0)\n"
            + "  --ordered           also the index of runs in per-user order, as the last file";

    private ExportMigrations() {
    }

    public static void main(String[] args) {
        int code = run(args, System.out, System.err);
        if (code != 0) {
            System.exit(code);
        }
    }

    /** Returns the exit code: 0 when written, 2 for a wrong command line, 1 when a file could not be written. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        Map<String, String> options;
        try {
            options = options(args);
        } catch (IllegalArgumentException e) {
            err.println(e.getMessage());
            err.println(USAGE);
            return 2;
        }
        if (options.containsKey("--help")) {
            out.println(USAGE);
            return 0;
        }
        try {
            Path dir = Path.of(required(options, "--out"));
            // A constant, written into this class by the compiler: RunsConfig (and runbus-core) is not loaded.
            String schema = options.getOrDefault("--schema", RunsConfig.DEFAULT_SCHEMA);
            int version = number(options, "--first-version", 1, 1);
            int after = number(options, "--after", 0, 0);
            List<Path> written = write(dir, files(schema, after, options.containsKey("--ordered"), version));
            for (Path p : written) {
                out.println("wrote " + p);
            }
            if (written.isEmpty()) {
                out.println("nothing to write: runbus has no migration above version " + after);
            }
            return 0;
        } catch (IllegalArgumentException e) {
            err.println(e.getMessage());
            err.println(USAGE);
            return 2;
        } catch (IOException e) {
            err.println("cannot write the scripts: " + e);
            return 1;
        }
    }

    /** File name to content, in the order to apply them. */
    private static Map<String, String> files(String schema, int after, boolean ordered, int firstVersion) {
        Map<String, String> files = new LinkedHashMap<>();
        int v = firstVersion;
        for (RunsSchema.Script s : RunsSchema.scripts(schema)) {
            if (s.version() > after) {
                files.put("V" + v++ + "__runbus_" + s.name().substring(s.name().indexOf("__") + 2), s.sql());
            }
        }
        if (ordered) {
            files.put("V" + v + "__runbus_ordered_index.sql", RunsSchema.orderedIndexScript(schema));
        }
        return files;
    }

    /** Writes every file, or none when one of them exists already (a second export must not overwrite the first). */
    private static List<Path> write(Path dir, Map<String, String> files) throws IOException {
        for (String name : files.keySet()) {
            if (Files.exists(dir.resolve(name))) {
                throw new IllegalArgumentException(dir.resolve(name) + " exists already: export into an empty folder,"
                        + " or with --after and --first-version past what the folder holds");
            }
        }
        Files.createDirectories(dir);
        List<Path> written = new ArrayList<>();
        for (Map.Entry<String, String> f : files.entrySet()) {
            written.add(Files.writeString(dir.resolve(f.getKey()), f.getValue(), StandardCharsets.UTF_8));
        }
        return written;
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--help", "-h" -> options.put("--help", "");
                case "--ordered" -> options.put(a, "");
                case "--out", "--schema", "--first-version", "--after" -> {
                    if (i + 1 == args.length) {
                        throw new IllegalArgumentException(a + " needs a value");
                    }
                    options.put(a, args[++i]);
                }
                default -> throw new IllegalArgumentException("unknown option: " + a);
            }
        }
        return options;
    }

    private static String required(Map<String, String> options, String name) {
        String v = options.get(name);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException(name + " is required");
        }
        return v;
    }

    private static int number(Map<String, String> options, String name, int dflt, int min) {
        String v = options.get(name);
        if (v == null) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= min) {
                return n;
            }
        } catch (NumberFormatException e) {
            // told below
        }
        throw new IllegalArgumentException(name + " must be a whole number of at least " + min + ", got '" + v + "'");
    }
}
