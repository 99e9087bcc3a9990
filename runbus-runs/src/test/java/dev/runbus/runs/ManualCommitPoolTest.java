package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The runs layer on a pool whose connections start without auto-commit (a common setting next to an ORM): every
 * write still commits. Without the runs layer turning auto-commit on, its one-statement writes (the attempt start,
 * the completion, the effect) were rolled back when their connection went back to the pool.
 */
class ManualCommitPoolTest extends RunsTestSupport {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int RUNS = 5;

    @Override
    protected DataSource runsDataSource() {
        HikariConfig c = new HikariConfig();
        c.setPoolName("runbus-test-manual-commit");
        c.setJdbcUrl(TestDatabase.URL);
        c.setMaximumPoolSize(8);
        c.setMinimumIdle(1);
        c.setAutoCommit(false);
        HikariDataSource pool = new HikariDataSource(c);
        closeables.add(pool);
        return pool;
    }

    @ParameterizedTest(name = "ordered = {0}")
    @ValueSource(booleans = {false, true})
    void runsSubmittedAndExecutedThroughAPoolWithoutAutoCommit_areStoredDone(boolean ordered) {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().build()).ordered(ordered).build());
        for (int i = 0; i < RUNS; i++) {
            runs.submit(NewRun.of("s", "u", "run " + i));
        }
        runs.startWorker(run -> {
            run.effects().once("notify", key -> "sent " + key);
            return ECHO.execute(run);
        });

        Wait.until("every run done", WAIT, () -> TestDatabase.count("SELECT count(*) FROM " + schema
                + ".runs WHERE status = 'done'") == RUNS);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs")).isEqualTo(RUNS);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE attempts = 1"))
                .isEqualTo(RUNS);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".messages")).isEqualTo(2L * RUNS);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".run_effects WHERE result LIKE 'sent %'"))
                .isEqualTo(RUNS);
        Wait.until("every trigger acked", WAIT, () -> bus().inspector().groups("runs").get(0).pending() == 0);
        assertThat(runs.counts().done()).isEqualTo(RUNS);
    }
}
