package dev.runbus.runs.internal.store;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Undoing a transaction that failed without hiding why it failed. When the connection broke, the rollback fails
 * too ("Connection is closed", often with no SQLState); thrown in place of the first failure, it hid the broken
 * connection from {@code GroupCommitter.isConnectionFailure}, which then retried a whole batch item by item, one
 * connection timeout each. The first failure is what the caller gets; the rollback's is attached to it.
 */
public final class Rollback {

    private Rollback() {
    }

    public static void after(Connection c, Throwable failure) {
        try {
            c.rollback();
        } catch (SQLException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /** Auto-commit back on, for the next user of a pooled connection; a broken connection gets discarded anyway. */
    public static void autoCommitAfter(Connection c, Throwable failure) {
        try {
            c.setAutoCommit(true);
        } catch (SQLException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }
}
