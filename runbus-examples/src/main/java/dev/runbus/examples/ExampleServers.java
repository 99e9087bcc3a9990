package dev.runbus.examples;

/**
 * Where the examples find Redis and PostgreSQL: {@code RUNBUS_REDIS_URL} and {@code RUNBUS_DATABASE_URL}, the lines
 * {@code ./runbus dev} prints for the embedded servers it starts, else a Redis and a PostgreSQL on this machine.
 */
final class ExampleServers {

    /** Without {@code RUNBUS_REDIS_URL}: a Redis on this machine's default port. */
    static final String DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

    /** Without {@code RUNBUS_DATABASE_URL}: a PostgreSQL on this machine with a {@code test} database. */
    static final String DEFAULT_DATABASE_URL = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";

    private ExampleServers() {
    }

    static String redisUrl() {
        return variable("RUNBUS_REDIS_URL", DEFAULT_REDIS_URL);
    }

    static String databaseUrl() {
        return variable("RUNBUS_DATABASE_URL", DEFAULT_DATABASE_URL);
    }

    /** An empty variable, as a compose file or a half-edited shell leaves it, counts as unset. */
    private static String variable(String name, String otherwise) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? otherwise : value.trim();
    }
}
