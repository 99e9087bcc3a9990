package dev.runbus.testkit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * A Redis server of one test's own, with a raw connection to it: for tests that flush scripts or data, which
 * must never do so to the server other tests share. Either a {@link RedisServerProcess} (the installed
 * {@code redis-server}) or an embedded Redis 6.2, so that a suite run per Redis version gets its own version
 * ({@link Deployment#ownRedis()}).
 */
public final class OwnRedis implements AutoCloseable {

    private final String uri;
    private final AutoCloseable server;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;

    private OwnRedis(String uri, AutoCloseable server) {
        this.uri = uri;
        this.server = server;
        this.client = RedisClient.create(uri);
        this.connection = client.connect();
    }

    /** A private {@code redis-server} process (see {@link RedisServerProcess} for which binary). */
    public static OwnRedis process() {
        return of(RedisServerProcess.start());
    }

    /** A private Redis 6.2, the binary inside the embedded-redis artifact. */
    public static OwnRedis embedded62() {
        return of(RedisServerProcess.startEmbedded62());
    }

    /** {@code server}, started by the caller, stopped when this is closed. */
    public static OwnRedis of(RedisServerProcess server) {
        return new OwnRedis(server.uri(), server);
    }

    public String uri() {
        return uri;
    }

    public RedisCommands<String, String> redis() {
        return connection.sync();
    }

    /** SCRIPT FLUSH, and FUNCTION FLUSH on a server with functions: the scripts as after a restart or failover. */
    public void flushScripts() {
        RedisFaultPlan.flushScripts(connection);
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
        try {
            server.close();
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop the test's own Redis at " + uri, e);
        }
    }
}
