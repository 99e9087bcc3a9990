package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.TestServers;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RunsSchema#scripts}, applied as a migration tool applies files (each in its own transaction), build the
 * schema runbus's own migration builds, record the version a runs layer with migrate off checks, and mix with
 * runbus's migration either way; {@link ExportMigrations} writes them under the tool's numbering.
 */
class MigrationScriptsTest {

    private final String byTool = TestServers.newSchema("rbtool");
    private final String byRunbus = TestServers.newSchema("rbself");

    @AfterEach
    void dropSchemas() {
        TestServers.dropSchema(byTool);
        TestServers.dropSchema(byRunbus);
    }

    @Test
    void theScriptsBuildWhatRunbusBuildsAndRecordTheirVersions() throws SQLException {
        List<RunsSchema.Script> scripts = RunsSchema.scripts(byTool);
        assertThat(scripts).extracting(RunsSchema.Script::version)
                .containsExactlyElementsOf(java.util.stream.IntStream.rangeClosed(1, RunsSchema.version()).boxed()
                        .toList());
        for (RunsSchema.Script s : scripts) {
            assertThat(s.sql()).as(s.name()).doesNotContain("${").doesNotContain("rbself");
            applyInATransaction(s.sql());
        }
        applyInATransaction(RunsSchema.orderedIndexScript(byTool));
        RunsSchema.migrate(TestDatabase.pool(), byRunbus, true);

        assertThat(shape(byTool)).isNotEmpty().containsExactlyElementsOf(shape(byRunbus));
        assertThat(versions(byTool)).isEqualTo(versions(byRunbus));
        RunsSchema.check(TestDatabase.pool(), byTool, true);
        // runbus's own migration finds every version recorded, and applies nothing again.
        assertThat(RunsSchema.migrate(TestDatabase.pool(), byTool, true)).isEmpty();
    }

    @Test
    void aSchemaLackingTheLastScriptsIsRefusedThenCompletedByTheRest() throws SQLException {
        List<RunsSchema.Script> scripts = RunsSchema.scripts(byTool);
        for (RunsSchema.Script s : scripts.subList(0, scripts.size() - 1)) {
            applyInATransaction(s.sql());
        }
        assertThatThrownBy(() -> RunsSchema.check(TestDatabase.pool(), byTool, false))
                .hasMessageContaining("is at version " + (RunsSchema.version() - 1))
                .hasMessageContaining("RunsSchema.scripts");
        // A script applied twice (a tool told to start over) changes nothing and records nothing twice.
        applyInATransaction(scripts.get(0).sql());
        applyInATransaction(scripts.get(scripts.size() - 1).sql());
        RunsSchema.check(TestDatabase.pool(), byTool, false);
        assertThat(versions(byTool)).hasSize(RunsSchema.version());
    }

    @Test
    void aSchemaRunbusMigratedTakesTheToolsScriptsOnTop() throws SQLException {
        RunsSchema.migrate(TestDatabase.pool(), byTool, false);
        for (RunsSchema.Script s : RunsSchema.scripts(byTool)) {
            applyInATransaction(s.sql());
        }
        RunsSchema.check(TestDatabase.pool(), byTool, false);
        assertThat(versions(byTool)).hasSize(RunsSchema.version());
    }

    @Test
    void exportWritesTheScriptsUnderTheToolsNumbering(@TempDir Path dir) throws Exception {
        assertThat(export("--out", dir.toString(), "--schema", byTool, "--first-version", "20", "--ordered"))
                .isZero();
        int n = RunsSchema.version();
        List<String> names = files(dir);
        assertThat(names).hasSize(n + 1).startsWith("V20__runbus_runs.sql", "V21__runbus_submit_order.sql")
                .contains("V" + (20 + n) + "__runbus_ordered_index.sql");
        assertThat(Files.readString(dir.resolve("V21__runbus_submit_order.sql")))
                .isEqualTo(RunsSchema.scripts(byTool).get(1).sql());

        Path upgrade = dir.resolve("upgrade");
        assertThat(export("--out", upgrade.toString(), "--schema", byTool, "--after", String.valueOf(n - 1),
                "--first-version", "40")).isZero();
        assertThat(files(upgrade)).containsExactly("V40__runbus_"
                + RunsSchema.scripts(byTool).get(n - 1).name().substring("V000__".length()));
    }

    @Test
    void exportRefusesWhatIsWrongAndOverwritesNothing(@TempDir Path dir) throws Exception {
        assertThat(export("--schema", "runbus")).isEqualTo(2);
        assertThat(err).contains("--out is required");
        assertThat(export("--out", dir.toString(), "--schema", "Runs")).isEqualTo(2);
        assertThat(err).contains("schema must be a lower-case SQL identifier");
        assertThat(export("--out", dir.toString(), "--first-version", "0")).isEqualTo(2);
        assertThat(err).contains("--first-version must be a whole number of at least 1, got '0'");
        assertThat(export("--out", dir.toString(), "--colour")).isEqualTo(2);
        assertThat(err).contains("unknown option: --colour");

        assertThat(export("--out", dir.toString())).isZero();
        Files.writeString(dir.resolve("V1__runbus_runs.sql"), "-- edited");
        assertThat(export("--out", dir.toString())).isEqualTo(2);
        assertThat(err).contains("V1__runbus_runs.sql exists already");
        assertThat(Files.readString(dir.resolve("V1__runbus_runs.sql"))).isEqualTo("-- edited");
    }

    private String err = "";

    private int export(String... args) {
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int code = ExportMigrations.run(args, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(e, true, StandardCharsets.UTF_8));
        err = e.toString(StandardCharsets.UTF_8);
        return code;
    }

    private static List<String> files(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(Files::isRegularFile).map(p -> p.getFileName().toString())
                    .sorted(java.util.Comparator.comparingInt(MigrationScriptsTest::versionOf)).toList();
        }
    }

    private static int versionOf(String file) {
        return Integer.parseInt(file.substring(1, file.indexOf("__")));
    }

    /** As a migration tool runs a file: the whole script in one statement call, in one transaction. */
    private static void applyInATransaction(String sql) throws SQLException {
        try (Connection c = TestDatabase.pool().getConnection()) {
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.execute(sql);
            }
            c.commit();
        }
    }

    private static List<String> versions(String schema) throws SQLException {
        return rows("SELECT version || ' ' || name FROM " + schema + ".schema_migrations ORDER BY version");
    }

    /** Tables with their columns, indexes, constraints, functions and triggers of a schema, without its name. */
    private static List<String> shape(String schema) throws SQLException {
        List<String> shape = new ArrayList<>();
        shape.addAll(rows("SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' '"
                + " || is_nullable || ' ' || coalesce(column_default, '') FROM information_schema.columns"
                + " WHERE table_schema = '" + schema + "' ORDER BY 1"));
        shape.addAll(rows("SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes"
                + " WHERE schemaname = '" + schema + "' ORDER BY 1"));
        shape.addAll(rows("SELECT 'constraint ' || conname || ' ' || pg_get_constraintdef(c.oid) FROM pg_constraint c"
                + " JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = '" + schema + "' ORDER BY 1"));
        shape.addAll(rows("SELECT 'function ' || p.proname || ' ' || md5(replace(p.prosrc, '" + schema + "', 'S')) FROM pg_proc p"
                + " JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = '" + schema + "' ORDER BY 1"));
        shape.addAll(rows("SELECT 'trigger ' || t.tgname FROM pg_trigger t JOIN pg_class r ON r.oid = t.tgrelid AND NOT t.tgisinternal"
                + " JOIN pg_namespace n ON n.oid = r.relnamespace WHERE n.nspname = '" + schema + "' ORDER BY 1"));
        return shape.stream().map(s -> s.replace(schema, "S")).toList();
    }

    private static List<String> rows(String sql) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Connection c = TestDatabase.pool().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                rows.add(rs.getString(1));
            }
        }
        return rows;
    }
}
