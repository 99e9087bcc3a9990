package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.runs.testing.RunsTestSupport;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL goes away under a runs layer: submissions fail fast, all of them, with {@link RunStoreException}.
 * Before, the group committer retried a failed batch item by item on its one thread, each item waiting a whole
 * connection timeout, so k waiting submissions took k + 1 timeouts (with HikariCP's default of 30 s, minutes).
 *
 * <p>Two waves: the first meets the pool's connections that the server closed (the driver fails at once, 08006),
 * the second an empty pool that cannot connect (HikariCP's connection timeout).
 */
class PostgresDownTest extends RunsTestSupport {

    /** What runbus-server gives HikariCP (DatabasePool.CONNECTION_TIMEOUT). */
    static final long CONNECTION_TIMEOUT_MS = 3_000;
    static final int SUBMITS = 20;

    @Test
    void submitsFailFastAndAllTogether_whenPostgresIsGone() throws Exception {
        EmbeddedPostgres pg = EmbeddedPostgres.builder().start();
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(pg.getJdbcUrl("postgres", "postgres"));
        hc.setConnectionTimeout(CONNECTION_TIMEOUT_MS);
        hc.setValidationTimeout(2_000);
        hc.setMaximumPoolSize(8);
        ExecutorService clients = Executors.newFixedThreadPool(SUBMITS);
        try (HikariDataSource ds = new HikariDataSource(hc)) {
            Runs runs = Runs.create(bus(), ds, config(schema, "w1", workerOptions().build()));
            closeables.add(runs);
            assertThat(runs.submit(NewRun.of("s", "u", "before")).created()).isTrue();

            pg.close();

            for (String wave : List.of("first", "second")) {
                long tookMs = failingWave(runs, clients, wave);
                System.out.printf("%s wave: %d submits with PostgreSQL down all failed after %d ms (connection"
                        + " timeout %d ms)%n", wave, SUBMITS, tookMs, CONNECTION_TIMEOUT_MS);
                // A few timeouts at most (the batch in progress, then the batch queued meanwhile), not 21; the
                // margin is for a loaded machine.
                assertThat(tookMs).as("%s wave", wave).isLessThan(15_000);
            }
            assertThat(ds.getHikariPoolMXBean().getTotalConnections()).as("connections left in the pool").isZero();
        } finally {
            clients.shutdownNow();
            pg.close();
        }
    }

    /** Submits concurrently, checks that every one failed with RunStoreException, and returns how long it took. */
    static long failingWave(Runs runs, ExecutorService clients, String wave) throws Exception {
        long start = System.nanoTime();
        List<CompletableFuture<Throwable>> outcomes = new ArrayList<>();
        for (int i = 0; i < SUBMITS; i++) {
            NewRun run = NewRun.of("s", "u", wave + " wave " + i);
            outcomes.add(CompletableFuture.supplyAsync(() -> {
                try {
                    runs.submit(run);
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            }, clients));
        }
        List<Throwable> failures = new ArrayList<>();
        for (CompletableFuture<Throwable> f : outcomes) {
            failures.add(f.get(5, TimeUnit.MINUTES));
        }
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertThat(failures).allSatisfy(t -> assertThat(t).isInstanceOf(RunStoreException.class)
                .hasMessageStartingWith("submitting a run failed"));
        return tookMs;
    }
}
