package dev.runbus.examples;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.List;

/** The examples work under a key prefix of their own and remove it afterwards; a real application keeps its streams. */
final class ExampleKeys {

    private ExampleKeys() {
    }

    /** Drops a schema the runs examples made; a real application keeps its runs. */
    static void dropSchema(String databaseUrl, String schema) throws java.sql.SQLException {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(databaseUrl);
             java.sql.Statement st = c.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    static void deleteAll(String redisUri, String prefix) {
        RedisClient client = RedisClient.create(redisUri);
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            List<String> keys = c.sync().keys(prefix + ":*");
            if (!keys.isEmpty()) {
                c.sync().del(keys.toArray(new String[0]));
            }
        } finally {
            client.shutdown();
        }
    }
}
