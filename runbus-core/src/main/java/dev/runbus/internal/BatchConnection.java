package dev.runbus.internal;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.util.function.Function;

/**
 * A connection for pipelined batches, opened on first use. Auto-flush is a property of the whole
 * connection, so batches take turns: each queues its commands and flushes them under a lock; replies are
 * awaited outside it, so batches from several threads still overlap on the wire.
 */
final class BatchConnection implements AutoCloseable {

    private final RedisClient client;
    private StatefulRedisConnection<String, byte[]> connection;
    private boolean closed;

    BatchConnection(RedisClient client) {
        this.client = client;
    }

    synchronized <T> T pipeline(Function<RedisAsyncCommands<String, byte[]>, T> commands) {
        if (closed) {
            throw new dev.runbus.RunbusException("the bus is closed");
        }
        if (connection == null) {
            connection = client.connect(RedisBus.CODEC);
        }
        connection.setAutoFlushCommands(false);
        try {
            return commands.apply(connection.async());
        } finally {
            connection.flushCommands();
            connection.setAutoFlushCommands(true);
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (connection != null) {
            connection.close();
        }
    }
}
