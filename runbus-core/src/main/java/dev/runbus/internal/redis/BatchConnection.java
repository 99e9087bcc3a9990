package dev.runbus.internal.redis;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.function.Function;

/**
 * A connection for pipelined batches, opened on first use. Auto-flush is a property of the whole
 * connection, so batches take turns: each queues its commands and flushes them under a lock; replies are
 * awaited outside it, so batches from several threads still overlap on the wire.
 */
public final class BatchConnection implements AutoCloseable {

    private final RedisLink link;
    private RedisLink.Pipe pipe;
    private boolean closed;

    public BatchConnection(RedisLink link) {
        this.link = link;
    }

    public synchronized <T> T pipeline(Function<RedisClusterAsyncCommands<String, byte[]>, T> commands) {
        if (closed) {
            throw new dev.runbus.RunbusException("the bus is closed");
        }
        if (pipe == null) {
            pipe = link.openPipe();
        }
        if (!pipe.flushTogether()) {
            return commands.apply(pipe.async());
        }
        pipe.connection().setAutoFlushCommands(false);
        try {
            return commands.apply(pipe.async());
        } finally {
            pipe.connection().flushCommands();
            pipe.connection().setAutoFlushCommands(true);
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (pipe != null) {
            pipe.connection().close();
        }
    }
}
