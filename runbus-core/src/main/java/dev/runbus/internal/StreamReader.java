package dev.runbus.internal;

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
 * different slots by design ({@link SlotTags}), are read with one non-blocking read per stream, sent together,
 * and polled every {@value #POLL_MILLIS} ms while all are empty. That adds up to {@value #POLL_MILLIS} ms of
 * latency to an idle partitioned topic on a cluster, and a few commands per poll; a busy one never waits.
 */
abstract class StreamReader implements AutoCloseable {

    static final long POLL_MILLIS = 20;

    /**
     * Reads new entries for the group from the streams ({@code XREADGROUP … >}), at most {@code room} in all
     * and at least one per stream asked ({@code room >= streams.size()}), waiting up to {@code block} while there
     * are none.
     */
    abstract List<StreamMessage<String, byte[]>> readGroup(Consumer<String> consumer, int room, Duration block,
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

        /** One command over all streams; its COUNT bounds each stream, so it is the room's share of each. */
        @Override
        List<StreamMessage<String, byte[]>> readGroup(Consumer<String> consumer, int room, Duration block,
                                                      List<String> streams) {
            return redis().xreadgroup(consumer, XReadArgs.Builder.count(room / streams.size()).block(block),
                    lastConsumed(streams));
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
     *
     * <p>A read sent to a master that died gets no answer until its timeout (the block time plus the command
     * timeout: Lettuce keeps it for the reconnect), so each read is awaited in short steps, and given up as
     * soon as the topology names another master for its slot; the loop then reads from the new one.
     */
    static final class OnCluster extends StreamReader {
        private static final long STEP_MILLIS = 200;

        private final StatefulRedisClusterConnection<String, byte[]> connection;
        private final StatefulRedisClusterConnection<String, byte[]> control;
        private final Runnable refreshTopology;
        private final Object poll = new Object();
        /** The node a blocking read waits on and its client id there; null when none waits. */
        private volatile Blocked blocked;
        private volatile boolean woken;
        /** Where {@link #readInTurn} starts. */
        private int nextFirst;

        private record Blocked(String host, int port, long clientId) {
        }

        /** A master, as the topology names it. */
        private record Master(String host, int port) {
        }

        OnCluster(StatefulRedisClusterConnection<String, byte[]> connection,
                  StatefulRedisClusterConnection<String, byte[]> control, Runnable refreshTopology) {
            this.connection = connection;
            this.control = control;
            this.refreshTopology = refreshTopology;
        }

        @Override
        List<StreamMessage<String, byte[]>> readGroup(Consumer<String> consumer, int room, Duration block,
                                                      List<String> streams) {
            if (oneSlot(streams)) {
                return blocking(streams.get(0), block, redis -> redis.xreadgroup(consumer,
                        XReadArgs.Builder.count(room / streams.size()).block(block), lastConsumed(streams)));
            }
            return polling(block, () -> readInTurn(consumer, room, streams));
        }

        /**
         * Reads the streams one after the other, each with all the room left, from the one after the stream that
         * filled the room last time: a backlog is read {@code room} entries per command, as one command over all
         * streams reads it on one server, rather than in shares of {@code room / streams} (six times the
         * commands for six partitions), and every stream gets its turn first in rotation.
         */
        private List<StreamMessage<String, byte[]>> readInTurn(Consumer<String> consumer, int room,
                                                               List<String> streams) {
            List<StreamMessage<String, byte[]>> out = new ArrayList<>();
            int n = streams.size();
            int first = Math.floorMod(nextFirst, n);
            for (int i = 0; i < n && out.size() < room; i++) {
                String stream = streams.get((first + i) % n);
                Map<String, RedisFuture<List<StreamMessage<String, byte[]>>>> reply = Map.of(stream, connection.async()
                        .xreadgroup(consumer, XReadArgs.Builder.count(room - out.size()),
                                XReadArgs.StreamOffset.lastConsumed(stream)));
                out.addAll(collect(reply));
                if (out.size() >= room) {
                    nextFirst = first + i + 1;
                }
            }
            return out;
        }

        @Override
        void awaitNew(Map<String, String> after, Duration block) {
            if (oneSlot(after.keySet())) {
                blocking(after.keySet().iterator().next(), block,
                        redis -> redis.xread(XReadArgs.Builder.count(1).block(block), after(after)));
                return;
            }
            polling(block, () -> {
                Map<String, RedisFuture<List<StreamMessage<String, byte[]>>>> replies = new LinkedHashMap<>();
                after.forEach((stream, id) -> replies.put(stream, connection.async().xread(
                        XReadArgs.Builder.count(1), XReadArgs.StreamOffset.from(stream, id))));
                return collect(replies);
            });
        }

        private static boolean oneSlot(java.util.Collection<String> streams) {
            return streams.stream().map(SlotHash::getSlot).distinct().count() == 1;
        }

        private Master masterOf(String key) {
            RedisClusterNode node = connection.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
            if (node == null) {
                throw new dev.runbus.RunbusException("no master serves the slot of " + key + " (yet)");
            }
            return new Master(node.getUri().getHost(), node.getUri().getPort());
        }

        private List<StreamMessage<String, byte[]>> blocking(String key, Duration block,
                java.util.function.Function<RedisAsyncCommands<String, byte[]>,
                        RedisFuture<List<StreamMessage<String, byte[]>>>> read) {
            try {
                Master master = masterOf(key);
                RedisAsyncCommands<String, byte[]> redis = connection.getConnectionAsync(master.host(), master.port())
                        .get(connection.getTimeout().toMillis(), TimeUnit.MILLISECONDS).async();
                long clientId = await(redis.clientId(), key, master, connection.getTimeout().toMillis());
                blocked = new Blocked(master.host(), master.port(), clientId);
                try {
                    return await(read.apply(redis), key, master, block.toMillis() + connection.getTimeout().toMillis());
                } finally {
                    blocked = null;
                }
            } catch (RuntimeException e) {
                refreshTopology.run();
                throw e;
            } catch (Exception e) {
                refreshTopology.run();
                throw new dev.runbus.RunbusException("reading " + key + " failed: " + e.getMessage(), e);
            }
        }

        /**
         * The reply of a command about {@code key} sent to {@code master}; given up when the topology names another
         * master for the key, or after {@code timeoutMillis}.
         */
        private <T> T await(RedisFuture<T> reply, String key, Master master, long timeoutMillis) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
            while (true) {
                try {
                    return reply.get(STEP_MILLIS, TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    Master now = masterOf(key);
                    if (!now.equals(master)) {
                        reply.cancel(true);
                        throw new dev.runbus.RunbusException("the slot of " + key + " moved from " + master.host()
                                + ":" + master.port() + " to " + now.host() + ":" + now.port() + "; reading again");
                    }
                    if (System.nanoTime() > deadline) {
                        reply.cancel(true);
                        throw new dev.runbus.RunbusException("reading " + key + " from " + master.host() + ":"
                                + master.port() + " timed out after " + timeoutMillis + " ms");
                    }
                } catch (java.util.concurrent.ExecutionException e) {
                    Throwable cause = e.getCause();
                    throw cause instanceof RuntimeException r ? r
                            : new dev.runbus.RunbusException("reading " + key + " failed: " + cause, cause);
                } catch (InterruptedException e) {
                    reply.cancel(true);
                    Thread.currentThread().interrupt();
                    throw new dev.runbus.RunbusException("reading " + key + " interrupted", e);
                }
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

        /** The replies of one read per stream, each awaited like a blocking read's (a dead master is left). */
        private List<StreamMessage<String, byte[]>> collect(
                Map<String, RedisFuture<List<StreamMessage<String, byte[]>>>> replies) {
            List<StreamMessage<String, byte[]>> out = new ArrayList<>();
            RuntimeException failed = null;
            for (Map.Entry<String, RedisFuture<List<StreamMessage<String, byte[]>>>> r : replies.entrySet()) {
                try {
                    out.addAll(await(r.getValue(), r.getKey(), masterOf(r.getKey()),
                            connection.getTimeout().toMillis()));
                } catch (RuntimeException e) {
                    failed = e;
                }
            }
            if (failed != null && out.isEmpty()) {
                throw failed;
            }
            if (failed != null) {
                // entries of the streams that answered are handed on; the others are read again next time
                refreshTopology.run();
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
                    // not awaited: a master that died would hold the caller (close) for the command timeout
                    control.getConnectionAsync(b.host(), b.port()).thenAccept(c -> c.async()
                            .clientUnblock(b.clientId(), UnblockType.TIMEOUT));
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
