package dev.runbus.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * What PostgreSQL can do with the writes of a run, without any bus: insert the run, insert its reply, set it
 * done — the same three writes on the runs layer's own tables — either {@code perTransaction} runs per
 * transaction (JDBC batches) or one transaction per run, on {@code threads} connections.
 */
final class PgCeiling {

    private PgCeiling() {
    }

    /** Runs per second. */
    static double measure(DataSource ds, String schema, int runs, int perTransaction, int threads, String tag)
            throws Exception {
        String insertRun = "INSERT INTO " + schema + ".runs (id, idempotency_key, input_hash, session_id, user_id,"
                + " input, status) VALUES (?, ?, ?, ?, ?, ?, 'pending') ON CONFLICT (idempotency_key) DO NOTHING";
        String insertReply = "INSERT INTO " + schema + ".messages (run_id, seq, role, content) VALUES (?, 1,"
                + " 'assistant', 'ok') ON CONFLICT (run_id, seq) DO NOTHING";
        String setDone = "UPDATE " + schema + ".runs SET status = 'done', finished_at = now(), updated_at = now()"
                + " WHERE id = ? AND status IN ('pending', 'running')";
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long t0 = System.nanoTime();
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    try (Connection c = ds.getConnection();
                         PreparedStatement run = c.prepareStatement(insertRun);
                         PreparedStatement reply = c.prepareStatement(insertReply);
                         PreparedStatement done = c.prepareStatement(setDone)) {
                        c.setAutoCommit(false);
                        while (true) {
                            int from = next.getAndAdd(perTransaction);
                            if (from >= runs) {
                                return null;
                            }
                            int n = Math.min(perTransaction, runs - from);
                            List<UUID> ids = new ArrayList<>(n);
                            for (int i = 0; i < n; i++) {
                                UUID id = UUID.randomUUID();
                                ids.add(id);
                                run.setObject(1, id);
                                run.setString(2, tag + "-" + (from + i));
                                run.setString(3, "hash");
                                run.setString(4, "session-" + (from + i) % 50);
                                run.setString(5, "user-" + (from + i) % 50);
                                run.setString(6, "input " + (from + i));
                                add(run, n);
                            }
                            flush(run, n);
                            for (UUID id : ids) {
                                reply.setObject(1, id);
                                add(reply, n);
                            }
                            flush(reply, n);
                            for (UUID id : ids) {
                                done.setObject(1, id);
                                add(done, n);
                            }
                            flush(done, n);
                            c.commit();
                        }
                    }
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        return runs / ((System.nanoTime() - t0) / 1e9);
    }

    /** One run per transaction executes each statement at once; several are sent as a JDBC batch. */
    private static void add(PreparedStatement ps, int n) throws SQLException {
        if (n == 1) {
            ps.executeUpdate();
        } else {
            ps.addBatch();
        }
    }

    private static void flush(PreparedStatement ps, int n) throws SQLException {
        if (n > 1) {
            ps.executeBatch();
        }
    }
}
