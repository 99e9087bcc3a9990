package dev.runbus.internal.redis;

import io.lettuce.core.Consumer;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.UnblockType;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One subscription's reads of new entries: blocking reads on a connection of their own, so that they never
 * delay the acks and scripts on the bus's shared connection, and {@link #unblock} to end a blocked read at once
 * from another thread (CLIENT UNBLOCK), which close and the ordered loop's wake need.
 *
 * <p>Redis Cluster refuses a command whose keys lie in several slots, blocking reads included, and a blocked
 * command holds its connection. So on a cluster streams of one slot (a plain topic, or one partition) are read
 * blocking on the connection to the slot's master, while the streams of several partitions, which sit in
 * different slots by design ({@link SlotTags}), are read with one non-blocking read per stream, one after the
 * other, and polled every {@value #POLL_MILLIS} ms while all are empty. That adds up to {@value #POLL_MILLIS}
 * ms of latency to an idle partitioned topic on a cluster, and a command per partition per poll; a busy one
 * never waits. Implementations: {@link ServerStreamReader}, {@link ClusterStreamReader}.
 */
public abstract class StreamReader implements AutoCloseable {

    static final long POLL_MILLIS = 20;

    /**
     * Reads new entries for the group from the streams ({@code XREADGROUP … >}), at most {@code room} in all,
     * waiting up to {@code block} while there are none. Unless {@link #readsInTurn}, {@code room} must be at
     * least the number of streams (one command over n streams reads up to {@code room / n} from each).
     */
    public abstract List<StreamMessage<String, byte[]>> readGroup(Consumer<String> consumer, int room, Duration block,
                                                           List<String> streams);

    /**
     * Waits up to {@code block} until one of the streams has an entry after the id it is mapped to; takes
     * nothing ({@code XREAD}).
     */
    public abstract void awaitNew(Map<String, String> after, Duration block);

    /**
     * Whether this reader takes streams one after the other, each with all the room left, so that it can be
     * given every stream whatever the room, and turns among them itself.
     */
    public abstract boolean readsInTurn();

    /** The answer of a read that the reader stopped waiting for, which came later: entries of one stream. */
    public record LateAnswer(List<StreamMessage<String, byte[]>> entries) {
    }

    /**
     * Takes the answers of reads left in flight that came since the last call, which {@link #readGroup} does not
     * return (the reading thread only). A reader that waits for every answer has none.
     */
    public List<LateAnswer> takeLateAnswers() {
        return List.of();
    }

    /** Ends a blocked read or wait at once; any thread. */
    public abstract void unblock();

    /** After a failed read: the connection may come back as a new client. */
    public abstract void reset();

    @Override
    public abstract void close();

    @SuppressWarnings("unchecked")
    static XReadArgs.StreamOffset<String>[] lastConsumed(List<String> streams) {
        XReadArgs.StreamOffset<String>[] offsets = new XReadArgs.StreamOffset[streams.size()];
        for (int i = 0; i < offsets.length; i++) {
            offsets[i] = XReadArgs.StreamOffset.lastConsumed(streams.get(i));
        }
        return offsets;
    }

    @SuppressWarnings("unchecked")
    static XReadArgs.StreamOffset<String>[] after(Map<String, String> after) {
        List<XReadArgs.StreamOffset<String>> offsets = new ArrayList<>();
        after.forEach((k, id) -> offsets.add(XReadArgs.StreamOffset.from(k, id)));
        return offsets.toArray(new XReadArgs.StreamOffset[0]);
    }
}
