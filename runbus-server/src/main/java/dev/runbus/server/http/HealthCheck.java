package dev.runbus.server.http;

import dev.runbus.Bus;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@code /health} answers: whether Redis and PostgreSQL answer, checked at most once a second whatever the
 * number of callers (the route is open to all, and a check takes a connection from the pool the API and the
 * worker share). A server going down is logged once with its cause, and once when it is back. Until the first
 * check ends, both count as up.
 */
final class HealthCheck {

    private static final Logger log = LoggerFactory.getLogger(HealthCheck.class);
    private static final long REUSE_NANOS = 1_000_000_000L;

    private final Bus bus;
    private final DataSource db;
    private final String topic;
    private long checkedAt;
    private boolean checked;
    private boolean checking;
    private boolean redisUp = true;
    private boolean postgresUp = true;

    HealthCheck(Bus bus, DataSource db, String topic) {
        this.bus = bus;
        this.db = db;
        this.topic = topic;
    }

    /**
     * {@code redis} and {@code postgres}, each {@code ok} or {@code down}, and {@code status} over both. One
     * caller at a time checks (a check may take the command or connection timeout); the others meanwhile get the
     * last answer at once rather than wait in line.
     */
    Map<String, Object> current() {
        boolean mine;
        synchronized (this) {
            mine = !checking && (!checked || System.nanoTime() - checkedAt >= REUSE_NANOS);
            checking |= mine;
        }
        if (mine) {
            try {
                Exception redis = checkRedis();
                Exception postgres = checkPostgres();
                synchronized (this) {
                    redisUp = report("Redis", redisUp, redis);
                    postgresUp = report("PostgreSQL", postgresUp, postgres);
                    checked = true;
                    checkedAt = System.nanoTime();
                }
            } finally {
                synchronized (this) {
                    checking = false;
                }
            }
        }
        synchronized (this) {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("redis", redisUp ? "ok" : "down");
            out.put("postgres", postgresUp ? "ok" : "down");
            out.put("status", redisUp && postgresUp ? "ok" : "down");
            return out;
        }
    }

    private Exception checkRedis() {
        try {
            bus.inspector().stream(topic);
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** A connection from the pool (3 s at most), checked with a 2 s bound whatever the socket timeout. */
    private Exception checkPostgres() {
        try (Connection c = db.getConnection()) {
            return c.isValid(2) ? null : new SQLException("the connection did not answer within 2 s");
        } catch (SQLException | RuntimeException e) {
            return e;
        }
    }

    private static boolean report(String server, boolean wasUp, Exception failure) {
        if (failure != null && wasUp) {
            log.warn("health: {} is down", server, failure);
        } else if (failure != null) {
            log.debug("health: {} is still down: {}", server, failure.toString());
        } else if (!wasUp) {
            log.info("health: {} is up again", server);
        }
        return failure == null;
    }
}
