package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.runbus.ScriptLibrary;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsSchema;
import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import java.io.PrintWriter;
import java.io.Writer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.EnumMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code runbus migrate --grant-to} as the migration role, then the runs layer of serve and worker as the runtime
 * role with {@code --no-migrate} (Setting.MIGRATE), on the machine's PostgreSQL with roles made for the test.
 */
class MigrateCommandTest {

    final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    final String migrator = "rbmig_" + suffix;
    final String runtime = "rbrt_" + suffix;
    final String schema = "rbmc_" + suffix;
    final String prefix = "rbmc-" + suffix;

    @BeforeEach
    void createRoles() throws Exception {
        admin("CREATE ROLE " + migrator + " LOGIN");
        admin("CREATE ROLE " + runtime + " LOGIN");
        admin("DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO " + migrator + "', current_database()); END $$");
    }

    @AfterEach
    void dropRoles() throws Exception {
        RedisTarget.local().deleteKeys(prefix);
        admin("DROP OWNED BY " + migrator + ", " + runtime + " CASCADE");
        admin("DROP ROLE " + runtime);
        admin("DROP ROLE " + migrator);
    }

    static void admin(String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(TestServers.databaseUrl()); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    static String urlAs(String role) {
        return TestServers.databaseUrl().replaceAll("user=[^&]*", "user=" + role);
    }

    Settings settings(String role, boolean migrate) {
        Map<Setting, String> flags = new EnumMap<>(Setting.class);
        flags.put(Setting.REDIS_URL, RedisTarget.local().uri());
        flags.put(Setting.DATABASE_URL, urlAs(role));
        flags.put(Setting.KEY_PREFIX, prefix);
        flags.put(Setting.SCHEMA, schema);
        if (!migrate) {
            flags.put(Setting.MIGRATE, "false");
        }
        return Settings.resolve(flags, Map.of(), null);
    }

    @Test
    void migrateWithGrants_thenTheRuntimeRoleServesWithNoMigrate() {
        Cli first = Cli.run("migrate", "--database-url", urlAs(migrator), "--schema", schema, "--grant-to", runtime);
        assertThat(first.exitCode).as(first.err).isZero();
        assertThat(first.out).contains("schema " + schema + " migrated to version " + RunsSchema.version())
                .contains(RunsSchema.runtimeGrants(schema, runtime).strip());
        Cli again = Cli.run("migrate", "--database-url", urlAs(migrator), "--schema", schema);
        assertThat(again.out).contains("is at version " + RunsSchema.version() + " already");

        Settings s = settings(runtime, false);
        try (Infrastructure infra = Infrastructure.start(s, true, false, new Metrics(), 4,
                new PrintWriter(Writer.nullWriter())); Runs runs = RunsFactory.create(infra, s, "c1")) {
            assertThat(runs.config().migrate()).isFalse();
            assertThat(runs.submit(NewRun.of("s", "u", "as the runtime role")).created()).isTrue();
            assertThat(runs.counts().pending()).isEqualTo(1);
        }
        Cli stats = Cli.run("stats", "--json", "--redis-url", RedisTarget.local().uri(), "--key-prefix", prefix,
                "--database-url", urlAs(runtime), "--schema", schema);
        assertThat(stats.exitCode).as(stats.err).isZero();
        assertThat(stats.out).contains("\"runs\":{\"pending\":1,\"running\":0,\"cancelling\":0,\"done\":0,\"failed\":0,"
                + "\"cancelled\":0,\"expired\":0,\"failed_without_dead_letter\":0}");
    }

    @Test
    void theRuntimeRoleWithoutNoMigrate_failsSayingWhatToDo() {
        assertThat(Cli.run("migrate", "--database-url", urlAs(migrator), "--schema", schema, "--grant-to", runtime)
                .exitCode).isZero();
        Settings s = settings(runtime, true);
        try (Infrastructure infra = Infrastructure.start(s, true, false, new Metrics(), 4,
                new PrintWriter(Writer.nullWriter()))) {
            assertThatThrownBy(() -> RunsFactory.create(infra, s, "c1")).hasMessageContaining("permission denied")
                    .hasMessageContaining("--no-migrate");
        }
    }

    @Test
    void migrateWithARedisUrlLoadsTheFunctionLibraryOnce_andOnRedis62HasNothingToLoad() {
        try (OwnRedis redis = OwnRedis.process()) {
            assumeTrue(!redis.redis().info("server").contains("redis_version:6."), "functions need Redis 7");
            Cli first = Cli.run("migrate", "--redis-url", redis.uri());
            assertThat(first.exitCode).as(first.err).isZero();
            assertThat(first.out).contains("function library " + ScriptLibrary.name() + " loaded on");
            Cli again = Cli.run("migrate", "--redis-url", redis.uri());
            assertThat(again.out).contains("function library " + ScriptLibrary.name() + " is loaded already");
        }
        try (OwnRedis redis62 = OwnRedis.embedded62()) {
            Cli none = Cli.run("migrate", "--redis-url", redis62.uri());
            assertThat(none.exitCode).as(none.err).isZero();
            assertThat(none.out).contains("nothing to load");
        }
    }

    @Test
    void migrateNeedsADatabaseUrl_andAValidRole() {
        Cli none = Cli.run("migrate");
        assertThat(none.exitCode).isEqualTo(2);
        assertThat(none.err).contains("migrate needs --database-url").contains("or --redis-url");
        Cli badRole = Cli.run("migrate", "--database-url", urlAs(migrator), "--schema", schema, "--grant-to", "x; DROP");
        assertThat(badRole.exitCode).isEqualTo(2);
        assertThat(badRole.err).contains("role must be a lower-case SQL identifier");
    }
}
