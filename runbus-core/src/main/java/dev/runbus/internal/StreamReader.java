package dev.runbus.internal;

import io.lettuce.core.Consumer;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.UnblockType;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
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
 * different slots by design ({@link SlotTags}), are read with one non-blocking read per stream, sent together,
 * and polled every {@value #POLL_MILLIS} ms while all are empty. That adds up to {@value #POLL_MILLIS} ms of
 * latency to an idle partitioned topic on a cluster, and a few commands per poll; a busy one never waits.
 */
abstract class StreamReader implements AutoCloseable {

    static final long POLL_MILLIS = 20;

    /**
     * Reads new entries for the group from the streams ({@code XREADGROUP … >}), at most {@code count} from
     * each, waiting up to {@code block} while there are none.
     */
    abstract List<StreamMessage<String, byte[]>> readGroup(Consumer<String> consumer, int count, Duration block,
                                                           List<String> streams);

    /**
     * Waits up to {@code block} until one of the streams has an entry after the id it is mapped to; takes
     * nothing ({@code XREAD}).
     */
    abstract void awaitNew(Map<String, String> after, Duration block);

    /** Ends a blocked read or wait at once; any thread. */
    abstract void unblock();

    /** After a failed read: the connection may come back as a new client. */
    abstract void reset();

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

    /** On one server (given directly or through Sentinel): one blocking command over all streams. */
    static final class OnOneServer extends StreamReader {
        private final StatefulRedisConnection<String, byte[]> connection;
        private final RedisClusterCommands<String, byte[]> control;
        private volatile long clientId = -1;

        OnOneServer(StatefulRedisConnection<String, byte[]> connection, RedisClusterCommands<String, byte[]> control) {
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

        @Override
        List<StreamMessage<String, byte[]>> readGroup(Consumer<String> consumer, int count, Duration block,
                                                      List<String> streams) {
            return redis().xreadgroup(consumer, XReadArgs.Builder.count(count).block(block), lastConsumed(streams));
        }

        @Override
        void awaitNew(Map<String, String> after, Duration block) {
            redis().xread(XReadArgs.Builder.count(1).block(block), after(after));
        }

        @Override
        void unblock() {
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
        void reset() {
            clientId = -1;
        }

        @Override
        public void close() {
            connection.close();
        }
    }

    /**
     * On a Redis Cluster: blocking reads of one slot go to the connection to that slot's master (whose client id
     * is known, for CLIENT UNBLOCK through the bus's own connection to the same node); reads of several slots
     * are polled (see the class comment). A read that fails asks for the topology at once: after a failover or
     * a slot move the next read goes to the new master.
     */
    static final class OnCluster extends StreamReader {
        private final StatefulRedisClusterConnection<String, byte[]> connection;
        private final StatefulRedisClusterConnection<String, byte[]> control;
        private final Runnable refreshTopology;
        private final Object poll = new Object();
        /** The node a blocking read waits on and its client id there; null when none waits. */
        private volatile Blocked blocked;
        private volatile boolean woken;

        private record Blocked(String host, int port, long clientId) {
        }

        OnCluster(StatefulRedisClusterConnection<String, byte[]> connection,
                  StatefulRedisClusterConnection<String, byte[]> control, Runnable refreshTopology) {
            this.connection = connection;
            this.control = control;
            this.refreshTopology = refreshTopology;
        }

        @Override
        List<StreamMessage<String, byte[]>> readGroup(Consumer<String> consumer, int count, Duration block,
                                                      List<String> streams) {
            if (oneSlot(streams)) {
                return blocking(streams.get(0), redis -> redis.xreadgroup(consumer,
                        XReadArgs.Builder.count(count).block(block), lastConsumed(streams)));
            }
            return polling(block, () -> {
                List<RedisFuture<List<StreamMessage<String, byte[]>>>> replies = new ArrayList<>();
                for (String stream : streams) {
                    replies.add(connection.async().xreadgroup(consumer, XReadArgs.Builder.count(count),
                            XReadArgs.StreamOffset.lastConsumed(stream)));
                }
                return collect(replies);
            });
        }

        @Override
        void awaitNew(Map<String, String> after, Duration block) {
            if (oneSlot(after.keySet())) {
                blocking(after.keySet().iterator().next(),
                        redis -> redis.xread(XReadArgs.Builder.count(1).block(block), after(after)));
                return;
            }
            polling(block, () -> {
                List<RedisFuture<List<StreamMessage<String, byte[]>>>> replies = new ArrayList<>();
                after.forEach((stream, id) -> replies.add(connection.async().xread(XReadArgs.Builder.count(1),
                        XReadArgs.StreamOffset.from(stream, id))));
                return collect(replies);
            });
        }

        private static boolean oneSlot(java.util.Collection<String> streams) {
            return streams.stream().map(SlotHash::getSlot).distinct().count() == 1;
        }

        private <T> T blocking(String key, java.util.function.Function<RedisCommands<String, byte[]>, T> read) {
            try {
                RedisClusterNode master = connection.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
                if (master == null) {
                    throw new dev.runbus.RunbusException("no master serves the slot of " + key + " yet");
                }
                String host = master.getUri().getHost();
                int port = master.getUri().getPort();
                RedisCommands<String, byte[]> redis = connection.getConnection(host, port).sync();
                blocked = new Blocked(host, port, redis.clientId());
                try {
                    return read.apply(redis);
                } finally {
                    blocked = null;
                }
            } catch (RuntimeException e) {
                refreshTopology.run();
                throw e;
            }
        }

        /** Reads until something came or {@code block} passed, pausing {@link #POLL_MILLIS} between reads. */
        private List<StreamMessage<String, byte[]>> polling(Duration block,
                java.util.function.Supplier<List<StreamMessage<String, byte[]>>> read) {
            long deadline = System.nanoTime() + block.toNanos();
            try {
                while (true) {
                    List<StreamMessage<String, byte[]>> got = read.get();
                    if (!got.isEmpty() || woken || System.nanoTime() >= deadline) {
                        woken = false; // a wake ends one wait: the one in progress, or else the next
                        return got;
                    }
                    synchronized (poll) {
                        if (!woken) {
                            poll.wait(Math.max(1, Math.min(POLL_MILLIS,
                                    TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
                        }
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return List.of();
            } catch (RuntimeException e) {
                refreshTopology.run();
                throw e;
            }
        }

        private List<StreamMessage<String, byte[]>> collect(
                List<RedisFuture<List<StreamMessage<String, byte[]>>>> replies) {
            List<StreamMessage<String, byte[]>> out = new ArrayList<>();
            for (RedisFuture<List<StreamMessage<String, byte[]>>> r : replies) {
                out.addAll(Calls.await("reading streams", r, connection.getTimeout().toMillis()));
            }
            return out;
        }

        @Override
        void unblock() {
            synchronized (poll) {
                woken = true;
                poll.notifyAll();
            }
            Blocked b = blocked;
            if (b != null) {
                try {
                    control.getConnection(b.host(), b.port()).sync().clientUnblock(b.clientId(), UnblockType.TIMEOUT);
                } catch (RuntimeException ignored) {
                    // the read ends by its block time instead
                }
            }
        }

        @Override
        void reset() {
            blocked = null;
        }

        @Override
        public void close() {
            connection.close();
        }
    }
}
