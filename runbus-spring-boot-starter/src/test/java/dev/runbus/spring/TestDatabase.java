package dev.runbus.spring;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/** The shared test PostgreSQL: a schema of each test class's own, dropped afterwards. */
final class TestDatabase {

    static final String URL = dev.runbus.testing.TestServers.databaseUrl();

    private TestDatabase() {
    }

    static String newSchema() {
        return "rbboot_" + UUID.randomUUID().toString().substring(0, 8);
    }

    static void dropSchema(String schema) {
        try (Connection c = DriverManager.getConnection(URL); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot drop schema " + schema, e);
        }
    }
}
