package dev.runbus.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The naive baseline for runs: PostgreSQL alone, one transaction per run — insert the run, insert its reply,
 * set it done — on the runs layer's own tables. What a first version without any batching gets.
 */
final class PgNaiveBaseline {

    private PgNaiveBaseline() {
    }

    /** Runs per second on {@code threads} connections. */
    static double measure(DataSource ds, String schema, int runs, int threads) throws Exception {
        String insertRun = "INSERT INTO " + schema + ".runs (id, idempotency_key, input_hash, session_id, user_id,"
                + " input, status) VALUES (?, ?, ?, ?, ?, ?, 'pending') ON CONFLICT (idempotency_key) DO NOTHING";
        String insertReply = "INSERT INTO " + schema + ".messages (run_id, seq, role, content) VALUES (?, 1,"
                + " 'assistant', 'ok') ON CONFLICT (run_id, seq) DO NOTHING";
        String setDone = "UPDATE " + schema + ".runs SET status = 'done', finished_at = now(), updated_at = now()"
                + " WHERE id = ? AND status IN ('pending', 'running')";
        return PgWorkers.measure(ds, runs, 1, threads, c -> {
            c.setAutoCommit(false);
            PreparedStatement run = c.prepareStatement(insertRun);
            PreparedStatement reply = c.prepareStatement(insertReply);
            PreparedStatement done = c.prepareStatement(setDone);
            return new PgWorkers.Writer() {
                @Override
                public void write(int from, int n) throws SQLException {
                    UUID id = UUID.randomUUID();
                    run.setObject(1, id);
                    run.setString(2, "k-" + from);
                    run.setString(3, "hash");
                    run.setString(4, "session-" + from % 50);
                    run.setString(5, "user-" + from % 50);
                    run.setString(6, "input " + from);
                    run.executeUpdate();
                    reply.setObject(1, id);
                    reply.executeUpdate();
                    done.setObject(1, id);
                    done.executeUpdate();
                    c.commit();
                }

                @Override
                public void close() throws SQLException {
                    run.close();
                    reply.close();
                    done.close();
                }
            };
        });
    }
}
