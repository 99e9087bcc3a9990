package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.RetryPolicy;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Wait;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A migration role that owns the schema and a runtime role with only {@link RunsSchema#runtimeGrants}: the whole
 * life of runs works as the runtime role with migrate off, and each way of getting it wrong fails saying what to do.
 */
class TwoRolesTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    String migrator;
    String runtime;
    HikariDataSource migratorPool;
    HikariDataSource runtimePool;

    @BeforeEach
    void createRoles() {
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        migrator = "rbmig_" + suffix;
        runtime = "rbrt_" + suffix;
        execute("CREATE ROLE " + migrator + " LOGIN");
        execute("CREATE ROLE " + runtime + " LOGIN");
        // The migration role may create schemas in this database; the runtime role gets nothing but the grants.
        execute("DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO " + migrator
                + "', current_database()); END $$");
        migratorPool = poolAs(migrator);
        runtimePool = poolAs(runtime);
    }

    @AfterEach
    void dropRoles() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        closeables.clear();
        migratorPool.close();
        runtimePool.close();
        // DROP OWNED takes the schema the migration role made, and every grant to either role in this database.
        execute("DROP OWNED BY " + migrator + ", " + runtime + " CASCADE");
        execute("DROP ROLE " + runtime);
        execute("DROP ROLE " + migrator);
    }

    static HikariDataSource poolAs(String role) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(TestDatabase.URL.replaceAll("user=[^&]*", "user=" + role));
        c.setUsername(role);
        c.setMaximumPoolSize(6);
        c.setPoolName("runbus-" + role);
        return new HikariDataSource(c);
    }

    void migrateAndGrant() {
        assertThat(RunsSchema.migrate(migratorPool, schema, false)).hasSize(RunsSchema.version());
        run(migratorPool, RunsSchema.runtimeGrants(schema, runtime));
    }

    RunsConfig.Builder config(boolean migrate) {
        return configBuilder(schema, "w1", workerOptions().maxDeliveries(2).build())
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(50))).migrate(migrate);
    }

    Runs runsAs(HikariDataSource pool, Bus bus, RunsConfig config) {
        Runs r = Runs.create(bus, pool, config);
        closeables.add(r);
        return r;
    }

    @Test
    void runtimeRoleWithMigrateOff_submitsExecutesSweepsAndReplays() throws Exception {
        migrateAndGrant();
        AtomicBoolean healed = new AtomicBoolean();
        Runs runs = runsAs(runtimePool, bus(), config(false).build());
        runs.startWorker(run -> {
            if (run.input().equals("poison") && !healed.get()) {
                throw new IllegalStateException("not yet");
            }
            String effect = run.effects().once("notify", key -> "sent:" + key);
            return List.of(Reply.assistant("echo:" + run.input()), new Reply("tool", effect));
        });
        runs.startSweeper();

        UUID ok = runs.submit(new NewRun("s", "u", "hello", "k-ok")).runId();
        assertThat(runs.submit(new NewRun("s", "u", "hello", "k-ok")).created()).isFalse();
        UUID poison = runs.submit(new NewRun("s", "u", "poison", "k-poison")).runId();
        UUID lost = lostRun("lost", Duration.ofMinutes(1)); // the sweeper, as the runtime role, publishes it

        Wait.until("ok done", WAIT, () -> runs.get(ok).orElseThrow().status() == RunStatus.DONE);
        Wait.until("lost done", WAIT, () -> runs.get(lost).orElseThrow().status() == RunStatus.DONE);
        Wait.until("poison failed", WAIT, () -> runs.get(poison).orElseThrow().status() == RunStatus.FAILED);
        healed.set(true);
        runs.replay(poison);
        Wait.until("poison done after replay", WAIT, () -> runs.get(poison).orElseThrow().status() == RunStatus.DONE);

        assertThat(runs.replies(ok)).extracting(StoredReply::content).containsExactly("echo:hello", "sent:" + ok + ":notify");
        assertThat(runs.replies(poison)).hasSize(2);
        assertThat(republishedOf(lost)).isEqualTo(1);
        assertThat(runs.counts()).isEqualTo(new RunCounts(0, 0, 3, 0));
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".run_effects")).isEqualTo(3);
    }

    @Test
    void runtimeRoleCannotChangeTheSchema() {
        migrateAndGrant();
        assertThatThrownBy(() -> run(runtimePool, "CREATE TABLE " + schema + ".intruder (x int)"))
                .hasMessageContaining("permission denied for schema " + schema);
        assertThatThrownBy(() -> run(runtimePool, "DELETE FROM " + schema + ".runs"))
                .hasMessageContaining("permission denied for table runs");
        assertThatThrownBy(() -> run(runtimePool, "ALTER TABLE " + schema + ".runs ADD COLUMN x int"))
                .hasMessageContaining("must be owner of table runs");
        // The counts are the trigger's to keep (it runs with its owner's rights): the runtime role reads them only.
        assertThatThrownBy(() -> run(runtimePool, "UPDATE " + schema + ".run_counts SET n = n + 1"))
                .hasMessageContaining("permission denied for table run_counts");
    }

    /**
     * A third role with only {@link RunsSchema#pruneGrants} deletes finished runs (their replies and effects, and the
     * counts follow through the trigger, which writes them with its owner's rights), and can do nothing else.
     */
    @Test
    void pruneRoleDeletesFinishedRuns_andCanNeitherWriteRunsNorChangeTheSchema() throws Exception {
        migrateAndGrant();
        String pruner = "rbpr_" + migrator.substring("rbmig_".length());
        execute("CREATE ROLE " + pruner + " LOGIN");
        try (HikariDataSource prunerPool = poolAs(pruner)) {
            run(migratorPool, RunsSchema.pruneGrants(schema, pruner));
            Runs runs = runsAs(runtimePool, bus(), config(false).build());
            runs.startWorker(run -> List.of(Reply.assistant("echo:" + run.input()),
                    new Reply("tool", run.effects().once("notify", key -> "sent"))));
            UUID done = runs.submit(NewRun.of("s", "u", "old")).runId();
            Wait.until("done", WAIT, () -> runs.get(done).orElseThrow().status() == RunStatus.DONE);
            UUID pending = lostRun("waiting", Duration.ofDays(2));

            Runs pruning = runsAs(prunerPool, bus(), config(false).build());
            assertThat(pruning.deleteFinished(java.time.Instant.now().plusSeconds(1), 100)).isEqualTo(1);
            assertThat(runs.get(done)).isEmpty();
            assertThat(runs.get(pending)).isPresent();
            assertThat(runs.counts()).isEqualTo(new RunCounts(1, 0, 0, 0));
            assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".run_effects")).isZero();

            assertThatThrownBy(() -> run(prunerPool, "UPDATE " + schema + ".runs SET status = 'done'"))
                    .hasMessageContaining("permission denied for table runs");
            assertThatThrownBy(() -> pruning.submit(NewRun.of("s", "u", "not mine")))
                    .hasMessageContaining("permission denied");
            assertThatThrownBy(() -> run(prunerPool, "CREATE TABLE " + schema + ".intruder (x int)"))
                    .hasMessageContaining("permission denied for schema " + schema);
        } finally {
            for (int i = closeables.size() - 1; i >= 0; i--) {
                closeables.get(i).close();
            }
            closeables.clear();
            execute("DROP OWNED BY " + pruner + " CASCADE");
            execute("DROP ROLE " + pruner);
        }
    }

    @Test
    void runtimeRoleWithMigrateOn_failsSayingWhichRoleToUse() {
        migrateAndGrant();
        assertThatThrownBy(() -> runsAs(runtimePool, bus(), config(true).build()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("permission denied")
                .hasMessageContaining("runbus migrate")
                .hasMessageContaining("--no-migrate");
    }

    @Test
    void migrateOffOnASchemaWithoutTables_failsNamingTheVersionNeeded() {
        run(migratorPool, "CREATE SCHEMA " + schema);
        run(migratorPool, "GRANT USAGE ON SCHEMA " + schema + " TO " + runtime);
        assertThatThrownBy(() -> runsAs(runtimePool, bus(), config(false).build()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("schema " + schema + " has no runs tables (no " + schema + ".schema_migrations), this"
                        + " runbus needs version " + RunsSchema.version() + ": run the migration with a role that may"
                        + " create tables — runbus migrate, or serve without --no-migrate (RunsConfig.migrate(true)),"
                        + " or have a migration tool apply RunsSchema.scripts (ExportMigrations writes them as files)");
    }

    @Test
    void migrateOffOnAnOlderSchema_failsNamingBothVersions() {
        migrateAndGrant();
        int needed = RunsSchema.version();
        execute("DELETE FROM " + schema + ".schema_migrations WHERE version = " + needed);
        assertThatThrownBy(() -> runsAs(runtimePool, bus(), config(false).build()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("schema " + schema + " is at version " + (needed - 1) + ", this runbus needs "
                        + needed + " (")
                .hasMessageContaining("run the migration with a role that may create tables — runbus migrate");
    }

    @Test
    void orderedRunsWithMigrateOff_needTheirIndex() {
        migrateAndGrant();
        assertThatThrownBy(() -> runsAs(runtimePool, bus(), config(false).ordered(true).build()))
                .hasMessageContaining("runs_user_unfinished_idx").hasMessageContaining("runbus migrate --ordered");
        RunsSchema.migrate(migratorPool, schema, true);
        runsAs(runtimePool, bus(), config(false).ordered(true).build()); // now it starts
    }

    static void run(HikariDataSource pool, String sql) {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }
}
