package dev.runbus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.ExportMigrations;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsSchema;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Flyway recipe of docs/spring-boot.md with Boot's own Flyway: the application's migration and runbus's
 * scripts, exported after it ({@link ExportMigrations} --first-version 2), in one location; Flyway applies them as
 * the application starts, and the runs layer, with {@code runbus.runs.migrate=false}, starts on the schema Flyway
 * built and runs a run.
 */
@ExtendWith(FlywayRecipeTest.RemoveTestData.class)
@SpringBootTest(classes = FlywayRecipeTest.App.class)
@DirtiesContext
class FlywayRecipeTest {

    static final String PREFIX = TestServers.newPrefix("rbflyway");
    static final String SCHEMA = TestServers.newSchema("rbflyway");
    static Path migrations;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) throws IOException {
        migrations = Files.createTempDirectory("runbus-flyway");
        Files.writeString(migrations.resolve("V1__orders.sql"),
                "CREATE TABLE " + SCHEMA + ".orders (id BIGINT PRIMARY KEY);\n");
        ExportMigrations.main(new String[] {"--schema", SCHEMA, "--first-version", "2", "--out",
                migrations.toString()});
        registry.add("spring.datasource.url", TestServers::databaseUrl);
        registry.add("spring.flyway.locations", () -> "filesystem:" + migrations);
        registry.add("spring.flyway.schemas", () -> SCHEMA);
        registry.add("runbus.redis-url", TestServers::redisUri);
        registry.add("runbus.key-prefix", () -> PREFIX);
        registry.add("runbus.runs.enabled", () -> "true");
        registry.add("runbus.runs.schema", () -> SCHEMA);
        registry.add("runbus.runs.migrate", () -> "false");
    }

    /** After Spring closed the context (declared before SpringExtension, so its afterAll runs after Spring's). */
    static final class RemoveTestData implements AfterAllCallback {
        @Override
        public void afterAll(ExtensionContext context) throws IOException {
            TestServers.deleteKeys(PREFIX);
            TestServers.dropSchema(SCHEMA);
            try (Stream<Path> files = Files.walk(migrations)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    @SpringBootApplication
    static class App {
        @Bean
        RunHandler runHandler() {
            return run -> List.of(Reply.assistant("done: " + run.input()));
        }
    }

    @Autowired
    Runs runs;

    @Autowired
    DataSource dataSource;

    @Test
    void flywayBuildsTheSchemaAndTheRunsLayerRunsOnItWithoutMigrating() throws SQLException {
        assertThat(runs.config().migrate()).isFalse();
        assertThat(count("SELECT count(*) FROM " + SCHEMA + ".flyway_schema_history WHERE success AND type = 'SQL'"))
                .as("the application's migration and runbus's, applied by Flyway")
                .isEqualTo(1 + RunsSchema.version());
        assertThat(count("SELECT count(*) FROM " + SCHEMA + ".schema_migrations"))
                .as("the versions the runs layer checked, recorded by the scripts")
                .isEqualTo(RunsSchema.version());

        UUID id = runs.submit(NewRun.of("s", "u", "hello")).runId();
        Wait.until("done", Duration.ofSeconds(20), () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        assertThat(runs.replies(id)).singleElement().satisfies(r -> assertThat(r.content()).isEqualTo("done: hello"));
    }

    private long count(String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
