package dev.runbus.server.embedded;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The embedded Redis and PostgreSQL of demo, serve and dev, on free loopback ports, each with a random password,
 * their data in one folder: the {@code --data-dir} given, or a temporary folder deleted on close. Closing stops
 * PostgreSQL, then Redis, then deletes a temporary folder; nothing else stops them (no JVM shutdown hook), so a
 * command that drains into them stops them when it is done with them.
 */
public final class EmbeddedServers implements AutoCloseable {

    private final Path dataDir;
    private final boolean temporary;
    private final PrintWriter out;
    // Set while start() runs, before the instance leaves it.
    private EmbeddedRedis redis;
    private int redisPort;
    private String redisPassword;
    private EmbeddedPostgres postgres;
    private String postgresPassword;
    private boolean closed;

    private EmbeddedServers(Path dataDir, boolean temporary, PrintWriter out) {
        this.dataDir = dataDir;
        this.temporary = temporary;
        this.out = out;
    }

    /**
     * Starts the servers asked for, each reported on {@code out} once it accepts connections. On a failure, what was
     * started is stopped again before the error leaves.
     *
     * @param dataDir null: a temporary folder, deleted on close (when a server is started at all)
     * @throws IllegalStateException when a folder is not this user's own, or PostgreSQL cannot run here (as root
     *                               without user namespaces, no binary for this platform), before anything starts
     */
    public static EmbeddedServers start(Path dataDir, boolean withRedis, boolean withPostgres, PrintWriter out)
            throws IOException {
        if (!withRedis && !withPostgres) {
            return new EmbeddedServers(null, false, out);
        }
        if (withPostgres) {
            EmbeddedPostgresServer.checkCanRunHere();
        }
        Path dir = dataDir == null ? Files.createTempDirectory("runbus-") : OwnFolders.dataFolder(dataDir);
        EmbeddedServers started = new EmbeddedServers(dir, dataDir == null, out);
        try {
            if (withRedis) {
                started.redisPort = freePort();
                started.redisPassword = EmbeddedPasswords.random();
                started.redis = EmbeddedRedis.start(started.redisPort, OwnFolders.dataFolder(dir.resolve("redis")),
                        started.redisPassword);
                report(out, "started embedded Redis on " + started.redisUri());
            }
            if (withPostgres) {
                EmbeddedPostgresServer.Started pg = EmbeddedPostgresServer.start(dir.resolve("postgres"));
                started.postgres = pg.postgres();
                started.postgresPassword = pg.password();
                report(out, "started embedded PostgreSQL on port " + started.postgresPort());
            }
            return started;
        } catch (IOException | RuntimeException e) {
            started.close();
            throw e;
        }
    }

    public boolean hasRedis() {
        return redis != null;
    }

    public boolean hasPostgres() {
        return postgres != null;
    }

    /** {@code redis://127.0.0.1:PORT}, without the password. */
    public String redisUri() {
        return "redis://127.0.0.1:" + redisPort;
    }

    public int redisPort() {
        return redisPort;
    }

    public String redisPassword() {
        return redisPassword;
    }

    /** {@code jdbc:postgresql://…/postgres?user=postgres}, without the password. */
    public String jdbcUrl() {
        return postgres.getJdbcUrl("postgres", "postgres");
    }

    public int postgresPort() {
        return postgres.getPort();
    }

    public String postgresPassword() {
        return postgresPassword;
    }

    /** Where their data is; null when nothing was started. */
    public Path dataDir() {
        return dataDir;
    }

    /** Whether {@link #dataDir()} is deleted on close. */
    public boolean temporary() {
        return temporary;
    }

    /** Once: PostgreSQL, then Redis, each reported on {@code out} as it stops, then a temporary folder. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (postgres != null) {
            try {
                postgres.close();
                report(out, "stopped embedded PostgreSQL");
            } catch (IOException ignored) {
                // stopping anyway
            }
        }
        if (redis != null) {
            redis.close();
            report(out, "stopped embedded Redis");
        }
        if (temporary) {
            try (Stream<Path> files = Files.walk(dataDir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException ignored) {
                // a temporary folder left behind
            }
        }
    }

    private static void report(PrintWriter out, String line) {
        if (out != null) {
            out.println(line);
            out.flush();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
