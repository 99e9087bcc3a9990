package dev.runbus.bench;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * PostgreSQL alone writing runs, for the references of the runs scenario: {@code threads} connections take
 * the next {@code batch} runs in turn until all are written. Runs per second over the whole.
 */
final class PgWorkers {

    /** Writes runs {@code from} .. {@code from + n - 1} on the connection it was opened on. */
    interface Writer extends AutoCloseable {
        void write(int from, int n) throws SQLException;

        @Override
        void close() throws SQLException;
    }

    /** Prepares what a connection's writes need. */
    interface Writers {
        Writer open(Connection c) throws SQLException;
    }

    private PgWorkers() {
    }

    static double measure(DataSource ds, int runs, int batch, int threads, Writers writers) throws Exception {
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        // connections and statements are ready before the clock starts, as runbus's pool and worker are
        List<Connection> connections = new ArrayList<>();
        List<Writer> ready = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                Connection c = ds.getConnection();
                connections.add(c);
                ready.add(writers.open(c));
            }
            long t0 = System.nanoTime();
            List<Future<?>> futures = new ArrayList<>();
            for (Writer w : ready) {
                futures.add(pool.submit(() -> {
                    for (int from = next.getAndAdd(batch); from < runs; from = next.getAndAdd(batch)) {
                        w.write(from, Math.min(batch, runs - from));
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
            return runs / ((System.nanoTime() - t0) / 1e9);
        } finally {
            pool.shutdown();
            for (Writer w : ready) {
                w.close();
            }
            for (Connection c : connections) {
                c.close();
            }
        }
    }
}
