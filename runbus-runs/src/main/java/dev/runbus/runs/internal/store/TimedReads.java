package dev.runbus.runs.internal.store;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * The reads the runs layer answers its callers with ({@code Runs.list}, {@code get}, {@code replies}, {@code
 * effects}), each bounded by PostgreSQL's {@code statement_timeout} ({@code RunsConfig.readTimeout}): a listing that
 * would walk a large table, or a read waiting behind a lock a migration holds, fails with SQLState 57014 instead of
 * holding a pooled connection, which the workers share, for as long as it takes. {@code SET LOCAL}, in a transaction
 * of the read's own: the setting ends with it, so the connection goes back to the pool as it came.
 */
public final class TimedReads {

    private final DataSource dataSource;
    private final long timeoutMillis;

    /** @param timeout zero: no timeout of the runs layer's own (the role's or the database's still holds) */
    public TimedReads(DataSource dataSource, Duration timeout) {
        this.dataSource = AutoCommitDataSource.of(dataSource);
        this.timeoutMillis = timeout.toMillis();
    }

    public <T> T read(Transactions.Work<T> work) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            if (timeoutMillis == 0) {
                return work.on(c);
            }
            return Transactions.in(c, tx -> {
                try (Statement st = tx.createStatement()) {
                    st.execute("SET LOCAL statement_timeout = " + timeoutMillis);
                }
                return work.on(tx);
            });
        }
    }
}
