package dev.runbus.runs.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.testkit.TestServers;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The machine's PostgreSQL (or RUNBUS_TEST_DATABASE_URL, or an embedded one: {@link TestServers}), one pool per test
 * JVM; each test works in a schema of its own ({@link TestServers#newSchema}), so tests never see each other's rows.
 */
public final class TestDatabase {

    public static final String URL = TestServers.databaseUrl();

    private static volatile HikariDataSource pool;

    private TestDatabase() {
    }

    public static synchronized HikariDataSource pool() {
        if (pool == null) {
            pool = newPool("runbus-test", 16);
        }
        return pool;
    }

    /** A pool of at most {@code size} connections to the test database, for a test to close. */
    public static HikariDataSource newPool(String name, int size) {
        HikariConfig c = new HikariConfig();
        c.setPoolName(name);
        c.setJdbcUrl(URL);
        c.setMaximumPoolSize(size);
        // Opened as tests need them, not all at once in every test JVM: the machine's PostgreSQL (100
        // connections) serves several test JVMs side by side, and other builds besides.
        c.setMinimumIdle(2);
        return new HikariDataSource(c);
    }

    public static long count(String sql) {
        try (Connection c = pool().getConnection(); Statement st = c.createStatement();
             var rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** The first column of the first row, as text. */
    public static String string(String sql) {
        try (Connection c = pool().getConnection(); Statement st = c.createStatement();
             var rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }
}
