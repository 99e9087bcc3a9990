package dev.runbus.runs.internal.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.runbus.runs.internal.worker.GroupCommitter;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * A transaction on a connection that broke: the rollback fails too, and must not take the place of the failure
 * that says the connection broke (the group committer decides by it whether to retry item by item).
 */
class RollbackTest {

    /** A connection whose rollback, and setAutoCommit(true), fail as HikariCP's do once it closed a broken one. */
    static Connection broken() {
        return (Connection) Proxy.newProxyInstance(RollbackTest.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    boolean restoring = method.getName().equals("setAutoCommit") && Boolean.TRUE.equals(args[0]);
                    if (method.getName().equals("rollback") || restoring) {
                        throw new SQLException("Connection is closed");
                    }
                    return null;
                });
    }

    @Test
    void theFirstFailureIsThrown_theRollbacksIsAttached() {
        Throwable thrown = catchThrowable(() -> Transactions.in(broken(), c -> {
            throw new SQLException("An I/O error occurred while sending to the backend.", "08006");
        }));
        assertThat(thrown).isInstanceOf(SQLException.class).hasMessageContaining("I/O error");
        assertThat(((SQLException) thrown).getSQLState()).isEqualTo("08006");
        assertThat(thrown.getSuppressed()).extracting(Throwable::getMessage)
                .containsExactly("Connection is closed", "Connection is closed");
        assertThat(GroupCommitter.isConnectionFailure(thrown)).isTrue();
    }
}
