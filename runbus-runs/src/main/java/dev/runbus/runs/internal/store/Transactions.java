package dev.runbus.runs.internal.store;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * The few writes of the runs layer that need more than one statement in one transaction (an ordered submission
 * with its users' locks, the sweeper's marks, dead-letter reconciliation), on a connection that is otherwise in
 * auto-commit ({@link AutoCommitDataSource}).
 */
public final class Transactions {

    /** Work in one transaction. */
    public interface Work<T> {
        T on(Connection c) throws SQLException;
    }

    private Transactions() {
    }

    /**
     * Runs {@code work} in one transaction of {@code c}, which is in auto-commit before and after; a failure rolls
     * it back and is thrown as it was ({@link Rollback}).
     */
    public static <T> T in(Connection c, Work<T> work) throws SQLException {
        c.setAutoCommit(false);
        T result;
        try {
            result = work.on(c);
            c.commit();
        } catch (SQLException | RuntimeException e) {
            Rollback.after(c, e);
            Rollback.autoCommitAfter(c, e);
            throw e;
        }
        c.setAutoCommit(true);
        return result;
    }
}
