package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@link RunsConfig#readTimeout()}: a caller's read that PostgreSQL cannot answer in time (here: it waits behind a lock
 * on the runs table, as behind a migration) fails with a {@link RunStoreException} rather than holding a connection of
 * the pool the workers share for as long as the lock is held.
 */
class ReadTimeoutTest extends RunsTestSupport {

    @Test
    void readsWaitingLongerThanTheTimeout_failWithQueryCanceled_andTheNextReadsAreUntimed() throws Exception {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().build())
                .readTimeout(Duration.ofMillis(300)).build());
        UUID id = runs.submit(NewRun.of("s", "u", "x")).runId();
        try (Connection locker = DriverManager.getConnection(TestDatabase.URL)) {
            locker.setAutoCommit(false);
            locker.createStatement().execute("LOCK TABLE " + schema + ".runs IN ACCESS EXCLUSIVE MODE");
            try {
                assertCanceled(() -> runs.list(RunQuery.newest()));
                assertCanceled(() -> runs.list(RunQuery.newest().withSession("s")));
                assertCanceled(() -> runs.get(id));
            } finally {
                locker.rollback();
            }
        }
        assertThat(runs.list(RunQuery.newest()).runs()).extracting(Run::id).containsExactly(id);
        // SET LOCAL: the timeout ended with the read's transaction, and the pool's connections are as they were.
        for (int i = 0; i < 10; i++) {
            assertThat(TestDatabase.string("SHOW statement_timeout")).isEqualTo("0");
        }
    }

    /** Within a deadline far above the timeout: without one, the read would wait for as long as the lock is held. */
    private static void assertCanceled(Supplier<?> read) throws Exception {
        CompletableFuture<?> f = CompletableFuture.supplyAsync(read);
        try {
            f.get(30, TimeUnit.SECONDS);
            throw new AssertionError("the read returned while the table was locked");
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(RunStoreException.class);
            assertThat(e.getCause().getCause()).isInstanceOfSatisfying(SQLException.class,
                    sql -> assertThat(sql.getSQLState()).isEqualTo("57014"));
        }
    }
}
