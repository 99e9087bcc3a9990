package dev.runbus.runs.internal.store;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The application's data source, with every connection it hands the runs layer in auto-commit. Most of the runs
 * layer's writes are one statement each and commit by themselves; a pool configured without auto-commit (a common
 * setting next to an ORM) would otherwise roll them back, unseen, when the connection goes back to the pool. The
 * writes that need a transaction open one themselves. Turning auto-commit on costs no round trip.
 */
public final class AutoCommitDataSource implements DataSource {

    private final DataSource delegate;

    private AutoCommitDataSource(DataSource delegate) {
        this.delegate = delegate;
    }

    public static DataSource of(DataSource dataSource) {
        return dataSource instanceof AutoCommitDataSource ? dataSource : new AutoCommitDataSource(dataSource);
    }

    @Override
    public Connection getConnection() throws SQLException {
        return inAutoCommit(delegate.getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return inAutoCommit(delegate.getConnection(username, password));
    }

    private static Connection inAutoCommit(Connection c) throws SQLException {
        try {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            return c;
        } catch (SQLException | RuntimeException e) {
            try {
                c.close();
            } catch (SQLException | RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return delegate.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return delegate.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        return type.isInstance(this) ? type.cast(this) : delegate.unwrap(type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
        return type.isInstance(this) || delegate.isWrapperFor(type);
    }
}
