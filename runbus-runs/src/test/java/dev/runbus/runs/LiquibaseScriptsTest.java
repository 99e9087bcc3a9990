package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import liquibase.Liquibase;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.DirectoryResourceAccessor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Liquibase recipe of docs/spring-boot.md: the files {@link ExportMigrations} writes, each a {@code sqlFile}
 * change with {@code splitStatements="false"} in a changelog of the application's, applied by Liquibase; a runs
 * layer with migrate off then starts on the schema and runs a run.
 */
class LiquibaseScriptsTest extends RunsTestSupport {

    /** Where Liquibase keeps its own tables: the application's schema, not the runs layer's. */
    private final String app = TestServers.newSchema("rbliquibase");

    @AfterEach
    void dropAppSchema() {
        TestServers.dropSchema(app);
    }

    @Test
    void liquibaseAppliesTheScriptsAndARunsLayerWithMigrateOffRunsOnThem(@TempDir Path dir) throws Exception {
        Path runbus = dir.resolve("runbus");
        assertThat(ExportMigrations.run(new String[] {"--schema", schema, "--out", runbus.toString()},
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), System.err)).isZero();
        List<String> files;
        try (Stream<Path> s = Files.list(runbus)) {
            files = s.map(p -> p.getFileName().toString())
                    .sorted(java.util.Comparator.comparingInt(f -> Integer.parseInt(f.substring(1, f.indexOf("__")))))
                    .toList();
        }
        Files.writeString(dir.resolve("changelog.xml"), changelog(files));

        try (Connection c = TestDatabase.pool().getConnection()) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE SCHEMA " + app);
            }
            Database database = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
            database.setDefaultSchemaName(app);
            try (Liquibase liquibase = new Liquibase("changelog.xml", new DirectoryResourceAccessor(dir), database)) {
                liquibase.update("");
            }
        }
        assertThat(TestDatabase.count("SELECT count(*) FROM " + app + ".databasechangelog"))
                .isEqualTo(RunsSchema.version());
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".schema_migrations"))
                .isEqualTo(RunsSchema.version());

        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().build()).migrate(false).build());
        runs.startWorker(ECHO);
        UUID id = runs.submit(NewRun.of("s", "u", "hello")).runId();
        Wait.until("done", Duration.ofSeconds(20), () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
    }

    /** One change set per file, in order; one statement call per file, so that dollar-quoted bodies stay whole. */
    private static String changelog(List<String> files) {
        return """
                <?xml version="1.0" encoding="UTF-8"?>
                <databaseChangeLog xmlns="http://www.liquibase.org/xml/ns/dbchangelog"
                    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                    xsi:schemaLocation="http://www.liquibase.org/xml/ns/dbchangelog
                        http://www.liquibase.org/xml/ns/dbchangelog/dbchangelog-4.33.xsd">
                """ + files.stream().map(f -> """
                    <changeSet id="%s" author="runbus">
                        <sqlFile path="runbus/%s" relativeToChangelogFile="true" splitStatements="false"/>
                    </changeSet>
                """.formatted(f, f)).collect(Collectors.joining()) + "</databaseChangeLog>\n";
    }
}
