package dev.runbus.bench;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The reference for runbus's runs: PostgreSQL alone doing the writes runbus's runs layer needs, on its own
 * tables (triggers included), the way a careful hand-written batch job would — {@value #BATCH} runs per batch,
 * in the three transactions runbus needs (insert the runs; mark them running with attempts + 1; insert their
 * replies and mark them done), each one set-based statement over the batch's keys. What runbus adds on top
 * (Redis, the handler, the trigger's ack) is what the ratio runbus ÷ reference shows.
 */
final class PgSetReference {

    static final int BATCH = 100;

    private PgSetReference() {
    }

    /** Runs per second on {@code threads} connections. */
    static double measure(DataSource ds, String schema, int runs, int threads) throws Exception {
        String insert = "INSERT INTO " + schema + ".runs (id, idempotency_key, input_hash, session_id, user_id, input,"
                + " status) SELECT gen_random_uuid(), 'k-' || g, 'hash', 'session-' || g % 50, 'user-' || g % 50,"
                + " 'input ' || g, 'pending' FROM generate_series(?::int, ?::int) AS g"
                + " ON CONFLICT (idempotency_key) DO NOTHING RETURNING id";
        String start = "UPDATE " + schema + ".runs SET status = 'running', attempts = attempts + 1,"
                + " stream_id = 'reference', started_at = COALESCE(started_at, now()), next_attempt_at = NULL,"
                + " updated_at = now() WHERE id = ANY (?::uuid[]) AND status IN ('pending', 'running')";
        String complete = "WITH done AS (UPDATE " + schema + ".runs SET status = 'done', error = NULL,"
                + " next_attempt_at = NULL, finished_at = now(), updated_at = now()"
                + " WHERE id = ANY (?::uuid[]) AND status IN ('pending', 'running') RETURNING id)"
                + " INSERT INTO " + schema + ".messages (run_id, seq, role, content)"
                + " SELECT id, 1, 'assistant', 'ok' FROM done ON CONFLICT (run_id, seq) DO NOTHING";
        return PgWorkers.measure(ds, runs, BATCH, threads, c -> {
            c.setAutoCommit(true); // each statement its own transaction, as runbus commits each step
            PreparedStatement ins = c.prepareStatement(insert);
            PreparedStatement run = c.prepareStatement(start);
            PreparedStatement done = c.prepareStatement(complete);
            return new PgWorkers.Writer() {
                @Override
                public void write(int from, int n) throws SQLException {
                    ins.setInt(1, from);
                    ins.setInt(2, from + n - 1);
                    List<UUID> ids = new ArrayList<>(n);
                    try (ResultSet rs = ins.executeQuery()) {
                        while (rs.next()) {
                            ids.add(rs.getObject(1, UUID.class));
                        }
                    }
                    Array keys = c.createArrayOf("uuid", ids.toArray());
                    run.setArray(1, keys);
                    run.executeUpdate();
                    done.setArray(1, keys);
                    done.executeUpdate();
                }

                @Override
                public void close() throws SQLException {
                    ins.close();
                    run.close();
                    done.close();
                }
            };
        });
    }
}
