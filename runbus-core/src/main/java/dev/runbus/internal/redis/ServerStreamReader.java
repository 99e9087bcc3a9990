package dev.runbus.internal.redis;

import io.lettuce.core.Consumer;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.UnblockType;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Reads on one server (given directly or through Sentinel): one blocking command over all streams. */
final class ServerStreamReader extends StreamReader {
    private final StatefulRedisConnection<String, byte[]> connection;
    private final RedisClusterCommands<String, byte[]> control;
    private volatile long clientId = -1;

    ServerStreamReader(StatefulRedisConnection<String, byte[]> connection, RedisClusterCommands<String, byte[]> control) {
        this.connection = connection;
        this.control = control;
    }

    private RedisCommands<String, byte[]> redis() {
        RedisCommands<String, byte[]> redis = connection.sync();
        if (clientId < 0) {
            clientId = redis.clientId();
        }
        return redis;
    }

    /** One command over all streams; its COUNT bounds each stream, so it is the room's share of each. */
    @Override
    public List<StreamMessage<String, byte[]>> readGroup(Consumer<String> consumer, int room, Duration block,
                                                  List<String> streams) {
        return redis().xreadgroup(consumer, XReadArgs.Builder.count(room / streams.size()).block(block),
                lastConsumed(streams));
    }

    @Override
    public void awaitNew(Map<String, String> after, Duration block) {
        redis().xread(XReadArgs.Builder.count(1).block(block), after(after));
    }

    @Override
    public boolean readsInTurn() {
        return false;
    }

    @Override
    public void unblock() {
        long id = clientId;
        if (id >= 0) {
            try {
                control.clientUnblock(id, UnblockType.TIMEOUT);
            } catch (RuntimeException ignored) {
                // the read ends by its block time instead
            }
        }
    }

    @Override
    public void reset() {
        clientId = -1;
    }

    @Override
    public void close() {
        connection.close();
    }
}
