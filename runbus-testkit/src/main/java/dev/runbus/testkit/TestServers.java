package dev.runbus.testkit;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/**
 * Where the tests find Redis and PostgreSQL. The servers at the test URLs ({@code RUNBUS_TEST_REDIS_URL},
 * default {@code redis://127.0.0.1:6379}; {@code RUNBUS_TEST_DATABASE_URL}, default
 * {@code jdbc:postgresql://127.0.0.1:5432/test?user=postgres}) when they answer; otherwise servers the tests
 * start themselves — a private {@code redis-server} ({@link RedisServerProcess}) and an embedded PostgreSQL —
 * with one line on the console saying so. So {@code mvn verify} needs only a JDK.
 *
 * <p>Only the two test variables are read, never the {@code RUNBUS_*} settings a developer exports for the
 * {@code runbus} command.
 */
public final class TestServers {

    public static final String DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";
    public static final String DEFAULT_DATABASE_URL = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";

    private static String redisUri;
    private static boolean ownRedis;
    private static String databaseUrl;

    private TestServers() {
    }

    /** The Redis the tests share: the one at the test URL, or a private server started once per JVM. */
    public static synchronized String redisUri() {
        if (redisUri == null) {
            String wanted = System.getenv().getOrDefault("RUNBUS_TEST_REDIS_URL", DEFAULT_REDIS_URL);
            URI u = URI.create(wanted);
            if (RedisServerProcess.answersPing(u.getHost(), u.getPort() < 0 ? 6379 : u.getPort(), 1000)) {
                redisUri = wanted;
            } else {
                RedisServerProcess own = RedisServerProcess.start();
                Runtime.getRuntime().addShutdownHook(new Thread(own::close));
                redisUri = own.uri();
                ownRedis = true;
                announce("nothing answers at " + wanted + "; the tests use a redis-server of their own at " + redisUri
                        + " (" + RedisServerProcess.binary() + ")");
            }
        }
        return redisUri;
    }

    /** True when nothing answered at the test URL and {@link #redisUri()} is a server the tests started. */
    public static synchronized boolean startedOwnRedis() {
        redisUri();
        return ownRedis;
    }

    /** The PostgreSQL the tests share: the one at the test URL, or an embedded one started once per JVM. */
    public static synchronized String databaseUrl() {
        if (databaseUrl == null) {
            String wanted = System.getenv().getOrDefault("RUNBUS_TEST_DATABASE_URL", DEFAULT_DATABASE_URL);
            if (accepts(wanted)) {
                databaseUrl = wanted;
            } else {
                try {
                    EmbeddedPostgres pg = EmbeddedPostgres.builder().start();
                    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                        try {
                            pg.close();
                        } catch (IOException ignored) {
                            // the JVM is exiting
                        }
                    }));
                    databaseUrl = pg.getJdbcUrl("postgres", "postgres");
                    announce("nothing answers at " + wanted + "; the tests use an embedded PostgreSQL on port "
                            + pg.getPort());
                } catch (IOException e) {
                    throw new IllegalStateException("nothing answers at " + wanted
                            + " and the embedded PostgreSQL did not start", e);
                }
            }
        }
        return databaseUrl;
    }

    /** A key prefix of a test's own: {@code start}, a dash and 8 random hex digits. */
    public static String newPrefix(String start) {
        return start + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A schema name of a test's own: {@code start} (lower case), an underscore and 12 random hex digits. */
    public static String newSchema(String start) {
        return start + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /** Deletes every key under {@code prefix} on the shared Redis (never a flush: other tests use it too). */
    public static void deleteKeys(String prefix) {
        RedisTarget.local().deleteKeys(prefix);
    }

    /** Drops a schema of the shared PostgreSQL with everything in it; nothing when there is none. */
    public static void dropSchema(String schema) {
        try (Connection c = DriverManager.getConnection(databaseUrl()); Statement st = c.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot drop schema " + schema, e);
        }
    }

    /** True when something accepts connections at the host and port of a JDBC URL. */
    private static boolean accepts(String jdbcUrl) {
        URI u = URI.create(jdbcUrl.substring("jdbc:".length()));
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(u.getHost(), u.getPort() < 0 ? 5432 : u.getPort()), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * One line on the build's console. Surefire sends a test's System.out and System.err to report files, so
     * this writes to the process's standard error, which the build shows.
     */
    private static void announce(String line) {
        @SuppressWarnings("resource") // the process's own stderr stays open
        PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
        err.println("runbus tests: " + line);
        System.err.println("runbus tests: " + line);
    }
}
