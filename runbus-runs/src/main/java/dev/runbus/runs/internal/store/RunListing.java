package dev.runbus.runs.internal.store;

import dev.runbus.runs.Run;
import dev.runbus.runs.RunPage;
import dev.runbus.runs.RunPosition;
import dev.runbus.runs.RunQuery;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The runs listing: newest first, by keyset on {@code (created_at, id)} (never an offset, which would read and
 * throw away every run before the page), over the indexes of migration V006. One row more than the page is read
 * to know whether another page follows.
 */
public final class RunListing {

    private final DataSource dataSource;
    private final String runs;

    public RunListing(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.runs = schema + ".runs";
    }

    public RunPage list(RunQuery q) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT " + RunRows.COLUMNS + " FROM " + runs + " WHERE true");
        List<Object> args = new ArrayList<>();
        filter(sql, args, q.status() == null ? null : q.status().sql(), " AND status = ?");
        filter(sql, args, q.userId(), " AND user_id = ?");
        filter(sql, args, q.sessionId(), " AND session_id = ?");
        filter(sql, args, q.createdAfter() == null ? null : Timestamp.from(q.createdAfter()), " AND created_at > ?");
        filter(sql, args, q.createdBefore() == null ? null : Timestamp.from(q.createdBefore()), " AND created_at < ?");
        if (q.after() != null) {
            // A row comparison, which the (…, created_at, id) indexes answer as one range.
            sql.append(" AND (created_at, id) < (?, ?)");
            args.add(Timestamp.from(q.after().createdAt()));
            args.add(q.after().id());
        }
        sql.append(" ORDER BY created_at DESC, id DESC LIMIT ?");
        args.add(q.limit() + 1);
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.toString())) {
            for (int i = 0; i < args.size(); i++) {
                ps.setObject(i + 1, args.get(i));
            }
            List<Run> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(RunRows.read(rs));
                }
            }
            if (out.size() <= q.limit()) {
                return new RunPage(out, Optional.empty());
            }
            Run last = out.get(q.limit() - 1);
            return new RunPage(out.subList(0, q.limit()), Optional.of(new RunPosition(last.createdAt(), last.id())));
        }
    }

    private static void filter(StringBuilder sql, List<Object> args, Object value, String clause) {
        if (value != null) {
            sql.append(clause);
            args.add(value);
        }
    }
}
