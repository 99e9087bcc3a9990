package dev.runbus.server;

import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Tracing;
import dev.runbus.server.embedded.EmbeddedPostgresServer;
import dev.runbus.server.embedded.EmbeddedRedis;
import dev.runbus.server.embedded.EmbeddedServers;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The servers runbus talks to: the ones the URLs name, or, when a URL is empty, an embedded Redis and an
 * embedded PostgreSQL ({@link EmbeddedServers}: free ports, data under {@code --data-dir} or a temporary folder
 * deleted on close). Closing stops what was started here, in reverse order, and only then: the embedded servers
 * register no JVM shutdown hook of their own (see {@link EmbeddedRedis}), so nothing stops them while the
 * command that owns them is still draining into them. Every error leaving here has its passwords masked.
 *
 * <p>The embedded servers each get a random password (see {@link EmbeddedRedis}, {@link EmbeddedPostgresServer}),
 * handed to the bus and the pool in-process: another account on this host reaches their ports, not their data.
 */
public final class Infrastructure implements AutoCloseable {

    private final String redisUri;
    private final String jdbcUrl;
    private final EmbeddedServers embedded;
    private final HikariDataSource dataSource;
    private final char[] embeddedRedisPassword;
    private final String embeddedDatabasePassword;
    private final Bus bus;
    private final Metrics metrics;
    private boolean closed;

    private Infrastructure(String redisUri, String jdbcUrl, EmbeddedServers embedded, HikariDataSource dataSource,
                           Bus bus, Metrics metrics) {
        this.redisUri = redisUri;
        this.jdbcUrl = jdbcUrl;
        this.embedded = embedded;
        this.dataSource = dataSource;
        this.embeddedRedisPassword = embedded.hasRedis() ? embedded.redisPassword().toCharArray() : null;
        this.embeddedDatabasePassword = embedded.hasPostgres() ? embedded.postgresPassword() : null;
        this.bus = bus;
        this.metrics = metrics;
    }

    /**
     * @param needDatabase false for commands that only use Redis
     * @param embeddedAllowed false for commands that make no sense on servers that live only in this process
     * @param metrics         the registry the bus (and the runs layer made by {@link RunsFactory}) registers with;
     *                        null for a command that shows no metrics: nothing is measured, nor read for gauges
     */
    public static Infrastructure start(Settings s, boolean needDatabase, boolean embeddedAllowed, Metrics metrics,
                                       int poolSize, PrintWriter out) {
        if (!embeddedAllowed && (!s.isSet(Setting.REDIS_URL) || needDatabase && !s.isSet(Setting.DATABASE_URL))) {
            throw new IllegalArgumentException("this command needs --redis-url" + (needDatabase ? " and --database-url" : "")
                    + " (or RUNBUS_REDIS_URL" + (needDatabase ? ", RUNBUS_DATABASE_URL" : "")
                    + "): embedded servers live only inside demo and serve");
        }
        EmbeddedServers embedded = null;
        HikariDataSource ds = null;
        try {
            boolean embeddedRedis = s.get(Setting.REDIS_URL).isEmpty();
            boolean embeddedPostgres = needDatabase && s.get(Setting.DATABASE_URL).isEmpty();
            embedded = EmbeddedServers.start(s.isSet(Setting.DATA_DIR) ? Path.of(s.get(Setting.DATA_DIR)) : null,
                    embeddedRedis, embeddedPostgres, out);
            String redisUri = embeddedRedis ? embedded.redisUri() : s.get(Setting.REDIS_URL);
            char[] redisPassword = embeddedRedis ? embedded.redisPassword().toCharArray() : null;
            String jdbcUrl = embeddedPostgres ? embedded.jdbcUrl() : s.get(Setting.DATABASE_URL);
            if (needDatabase) {
                ds = embeddedPostgres ? DatabasePool.open(jdbcUrl, Optional.of(embedded.postgresPassword()), poolSize)
                        : DatabasePool.open(s, jdbcUrl, poolSize);
            }
            Bus bus = Bus.connect(busConfig(s, redisUri, redisPassword)
                    .meterRegistry(metrics == null ? null : metrics.registry()).tracing(Tracing.global()).build());
            return new Infrastructure(redisUri, jdbcUrl, embedded, ds, bus, metrics);
        } catch (IOException | RuntimeException e) {
            if (ds != null) {
                ds.close();
            }
            if (embedded != null) {
                embedded.close();
            }
            throw masked(e);
        }
    }

    /**
     * The bus the settings describe on {@code redisUri}, but for its meters and tracing; {@link Settings#validate()}
     * builds it too, so that a bad value is refused before any server starts.
     */
    static BusConfig.Builder busConfig(Settings s, String redisUri, char[] embeddedPassword) {
        // The runs topic's partition count, which Redis records on first use and checks on every later one.
        return redisConfig(s, redisUri, embeddedPassword).keyPrefix(s.get(Setting.KEY_PREFIX))
                .meterRefreshInterval(s.duration(Setting.METER_REFRESH))
                .partitions(s.get(Setting.TOPIC), s.integer(Setting.PARTITIONS, 1))
                .retentionAge(s.duration(Setting.RETENTION_AGE))
                .deadLetterRetention(s.optionalDuration(Setting.DEAD_LETTER_RETENTION).orElse(null));
    }

    /** The Redis connection the settings give, with the embedded Redis's password when it is the embedded one. */
    private static BusConfig.Builder redisConfig(Settings s, String redisUri, char[] embeddedPassword) {
        BusConfig.Builder config = RedisAccess.apply(s, BusConfig.builder(redisUri));
        if (embeddedPassword != null) {
            config.redisPassword(embeddedPassword.clone());
            // The embedded Redis 6.2 predates the Lua fixes of 2025, but only this process holds its password:
            // nobody else can run a script on it (docs/security.md, "The embedded servers").
            config.unpatchedServerWarning(false);
        }
        return config;
    }

    /** A configuration for another connection to this Redis (the demo's clean-up), with its password. */
    public BusConfig.Builder redisConfig(Settings s) {
        return redisConfig(s, redisUri, embeddedRedisPassword);
    }

    /**
     * The settings a child process needs to reach these servers: the URLs, and for embedded servers their
     * passwords, which a child gets as variables (not flags, so they stay out of the process list).
     */
    public Map<Setting, String> forChild() {
        Map<Setting, String> out = new EnumMap<>(Setting.class);
        out.put(Setting.REDIS_URL, redisUri);
        out.put(Setting.DATABASE_URL, jdbcUrl);
        if (embeddedRedisPassword != null) {
            out.put(Setting.REDIS_PASSWORD, new String(embeddedRedisPassword));
            out.put(Setting.REDIS_PASSWORD_FILE, "");
        }
        if (embeddedDatabasePassword != null) {
            out.put(Setting.DATABASE_PASSWORD, embeddedDatabasePassword);
            out.put(Setting.DATABASE_PASSWORD_FILE, "");
        }
        return out;
    }

    /** The embedded Redis's password (null: not embedded). */
    char[] embeddedRedisPassword() {
        return embeddedRedisPassword == null ? null : embeddedRedisPassword.clone();
    }

    /** Which servers are embedded, for the serve banner: "Redis and PostgreSQL", "Redis", "PostgreSQL" or "". */
    public String embeddedServers() {
        return embedded.hasRedis() && embedded.hasPostgres() ? "Redis and PostgreSQL"
                : embedded.hasRedis() ? "Redis" : embedded.hasPostgres() ? "PostgreSQL" : "";
    }

    /** The registry of the bus's and the runs layer's meters; null when nothing is measured. */
    public Metrics metrics() {
        return metrics;
    }

    public Bus bus() {
        return bus;
    }

    public DataSource dataSource() {
        if (dataSource == null) {
            throw new IllegalStateException("no database configured");
        }
        return dataSource;
    }

    public boolean hasDatabase() {
        return dataSource != null;
    }

    public String redisUri() {
        return redisUri;
    }

    public String jdbcUrl() {
        return jdbcUrl;
    }

    public boolean isEmbedded() {
        return embedded.hasRedis() || embedded.hasPostgres();
    }

    /**
     * The failure with every password in its message masked (Hikari quotes a JDBC URL it rejects, whole). The
     * cause is not kept, as its message is the unmasked one; its stack trace is.
     */
    private static RuntimeException masked(Exception e) {
        String message = Settings.mask(String.valueOf(e.getMessage()));
        RuntimeException out = e instanceof IllegalArgumentException ? new IllegalArgumentException(message)
                : new IllegalStateException("cannot start: " + message);
        out.setStackTrace(e.getStackTrace());
        return out;
    }

    /** Once: the bus, the pool, then the embedded servers, each reported on the output given at start as it stops. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        bus.close();
        if (dataSource != null) {
            dataSource.close();
        }
        embedded.close();
    }
}
