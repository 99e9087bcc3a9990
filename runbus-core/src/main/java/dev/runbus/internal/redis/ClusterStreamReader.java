package dev.runbus.internal.redis;

import dev.runbus.RunbusException;
import io.lettuce.core.Consumer;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.UnblockType;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Reads on a Redis Cluster. A blocking read of one slot goes to the reader's connection to that slot's master,
 * whose client id it knows, for CLIENT UNBLOCK through the bus's own connection to the same master; reads of
 * several slots are made one stream after the other and polled ({@link StreamReader}). A read that fails asks
 * for the topology at once, so that after a failover or a slot move the next read goes to the new master.
 *
 * <p>A read sent to a master that died gets no answer until its timeout (Lettuce keeps it for a reconnect), so
 * each read is awaited in short steps and given up as soon as the topology names another master for its slot.
 * A master that moved but lives (a slot migrated, a manual failover) may still answer the read with entries it
 * has delivered to this consumer: before giving up, the read is unblocked there and its answer awaited a
 * moment, so that those entries are handed on rather than left pending until the reclaimer takes them.
 *
 * <p>Reads in turn are isolated per stream (docs/architecture.md, rule 14): a read that gets no answer within
 * {@value #STALL_MILLIS} ms (its master stalled) is not awaited but left in flight, and its stream skipped, while the
 * other streams are read on; when it answers, a wait for new entries ends and its entries are taken by
 * {@link #takeLateAnswers} (the read loop looks at least every time it looks for room), and when it gets no answer
 * within the command timeout it is given up and reported. So a stopped master holds back only its own partitions.
 */
final class ClusterStreamReader extends StreamReader {

    private static final long STEP_MILLIS = 200;
    /** How long a read unblocked on a master that no longer owns its slot may take to answer. */
    private static final long LAST_ANSWER_MILLIS = 500;

    private final StatefulRedisClusterConnection<String, byte[]> connection;
    private final StatefulRedisClusterConnection<String, byte[]> control;
    private final Runnable refreshTopology;
    private final long commandTimeoutMillis;
    private final Object poll = new Object();
    /** This reader's client id on each master it read from; a reconnect gives a new one ({@link #reset}). */
    private final Map<Master, Long> clientIds = new ConcurrentHashMap<>();
    /** The master a blocking read waits on and the client id there; null when none waits. */
    private volatile Blocked blocked;
    private volatile boolean woken;
    /** The stream {@link #readInTurn} starts after: the last that brought entries. */
    private String lastRead;
    /** How long a read in turn is awaited before it is left in flight and its stream skipped. */
    static final long STALL_MILLIS = 200;
    /** Reads in turn left in flight, by stream (the reading thread only). */
    private final Map<String, Parked> parked = new java.util.HashMap<>();
    /**
     * Masters with a read left in flight since their last answer: their next reads are left in flight at once rather
     * than awaited, so that a stalled master costs {@value #STALL_MILLIS} ms once, not at every read.
     */
    private final java.util.Set<Master> stalled = new java.util.HashSet<>();
    /** XREADs of {@link #awaitNew} left in flight, by stream (the reading thread only). */
    private final Map<String, RedisFuture<List<StreamMessage<String, byte[]>>>> peeking = new java.util.HashMap<>();

    /** A read in turn that got no answer in time: awaited no more, taken by {@link #takeLateAnswers} when it answers. */
    private record Parked(RedisFuture<List<StreamMessage<String, byte[]>>> reply, Master master, long deadlineNanos) {

        boolean answered() {
            return reply.isDone() && !reply.toCompletableFuture().isCompletedExceptionally();
        }
    }

    /** A read in turn that got no answer within the command timeout: its master stalled, the topology may be right. */
    static final class Stalled extends RunbusException {
        Stalled(String message) {
            super(message);
        }
    }

    private record Blocked(Master master, long clientId) {
    }

    /** A master, as the topology names it. */
    private record Master(String host, int port) {
        @Override
        public String toString() {
            return host + ":" + port;
        }
    }

    ClusterStreamReader(StatefulRedisClusterConnection<String, byte[]> connection,
                        StatefulRedisClusterConnection<String, byte[]> control, Runnable refreshTopology,
                        Duration commandTimeout) {
        this.connection = connection;
        this.control = control;
        this.refreshTopology = refreshTopology;
        this.commandTimeoutMillis = commandTimeout.toMillis();
    }

    @Override
    public boolean readsInTurn() {
        return true;
    }

    @Override
    public List<StreamMessage<String, byte[]>> readGroup(Consumer<String> consumer, int room, Duration block,
                                                  List<String> streams) {
        if (oneSlot(streams)) {
            int count = Math.max(1, room / streams.size());
            return blocking(streams.get(0), block, redis -> redis.xreadgroup(consumer,
                    XReadArgs.Builder.count(count).block(block), lastConsumed(streams)));
        }
        return polling(block, () -> readInTurn(consumer, room, streams));
    }

    @Override
    public void awaitNew(Map<String, String> after, Duration block) {
        if (oneSlot(after.keySet())) {
            blocking(after.keySet().iterator().next(), block,
                    redis -> redis.xread(XReadArgs.Builder.count(1).block(block), after(after)));
            return;
        }
        polling(block, () -> peekAll(after));
    }

    /**
     * One XREAD per stream, all sent at once (they take nothing) and awaited {@value #STALL_MILLIS} ms in all; one
     * unanswered by then is left in flight and its stream skipped until it answers (or the client times it out),
     * so that a stalled master does not hold up the wait for the others.
     */
    private List<StreamMessage<String, byte[]>> peekAll(Map<String, String> after) {
        List<StreamMessage<String, byte[]>> out = new ArrayList<>();
        for (var it = peeking.entrySet().iterator(); it.hasNext(); ) {
            RedisFuture<List<StreamMessage<String, byte[]>>> late = it.next().getValue();
            if (late.isDone()) {
                it.remove();
                if (!late.toCompletableFuture().isCompletedExceptionally()) {
                    out.addAll(late.toCompletableFuture().join()); // an entry came: the caller reads
                }
            }
        }
        Map<String, RedisFuture<List<StreamMessage<String, byte[]>>>> sent = new java.util.LinkedHashMap<>();
        RuntimeException failure = null;
        int failures = 0;
        for (Map.Entry<String, String> e : after.entrySet()) {
            if (!peeking.containsKey(e.getKey())) {
                if (masterOrNull(e.getKey()) == null) {
                    // No master serves it now (failed, not replaced): wait for the others.
                    failure = failure != null ? failure : new RunbusException("no master serves the slot of "
                            + e.getKey() + " (yet)");
                    failures++;
                    continue;
                }
                sent.put(e.getKey(), connection.async().xread(XReadArgs.Builder.count(1),
                        XReadArgs.StreamOffset.from(e.getKey(), e.getValue())));
            }
        }
        if (sent.isEmpty() && peeking.isEmpty() && failure != null) {
            refreshTopology.run();
            throw failure; // none of the streams can be waited on
        }
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STALL_MILLIS);
        for (Map.Entry<String, RedisFuture<List<StreamMessage<String, byte[]>>>> e : sent.entrySet()) {
            try {
                out.addAll(e.getValue().get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (TimeoutException x) {
                peeking.put(e.getKey(), e.getValue());
            } catch (ExecutionException x) {
                // This stream's wait failed: the others are waited on; the read that follows reports it.
                Throwable cause = x.getCause();
                failures++;
                if (failure == null) {
                    failure = cause instanceof RuntimeException r ? r
                            : new RunbusException("reading " + e.getKey() + " failed: " + cause, cause);
                }
            } catch (InterruptedException x) {
                Thread.currentThread().interrupt();
                return out;
            }
        }
        if (failure != null) {
            refreshTopology.run();
            if (out.isEmpty() && peeking.isEmpty() && failures == after.size()) {
                throw failure; // every stream failed: the caller reports it and backs off
            }
        }
        return out;
    }

    /**
     * Reads the streams one after the other, each with all the room, starting after the stream that brought entries
     * last time, and returns the entries of the first read that brings any: a backlog is read {@code room} entries
     * per command, as one command over all streams reads it on one server, rather than in shares of
     * {@code room / streams}, and every stream gets its turn. Entries a read brought are returned before another
     * read is awaited (up to {@value #STALL_MILLIS} ms each): they are pending under this consumer from the moment
     * Redis answered, and until the consumer holds them nothing keeps them from going idle past {@code minIdle}
     * and being claimed and run a second time. Late answers of reads left in flight are returned at once likewise.
     */
    private List<StreamMessage<String, byte[]>> readInTurn(Consumer<String> consumer, int room, List<String> streams) {
        List<StreamMessage<String, byte[]>> out = new ArrayList<>();
        RuntimeException lateFailure = giveUpParked(); // thrown below if nothing else came
        int n = streams.size();
        int first = (streams.indexOf(lastRead) + 1) % n; // 0 when none brought entries yet, or it is not asked for
        RuntimeException failure = null;
        boolean answered = false;
        for (int i = 0; i < n && out.isEmpty(); i++) {
            String stream = streams.get((first + i) % n);
            if (parked.containsKey(stream)) {
                continue; // its last read is still unanswered
            }
            try {
                Master master = masterOf(stream);
                RedisFuture<List<StreamMessage<String, byte[]>>> reply = connection.async().xreadgroup(consumer,
                        XReadArgs.Builder.count(room), XReadArgs.StreamOffset.lastConsumed(stream));
                List<StreamMessage<String, byte[]>> got = awaitOrPark(reply, stream, master);
                if (got == null) {
                    continue; // left in flight: the other streams are read meanwhile
                }
                answered = true;
                out.addAll(got);
            } catch (RuntimeException e) {
                // This stream alone (its master failed and was not replaced, a moved slot): the others are read
                // (docs/architecture.md, rule 14); the failure is thrown when no stream answered, so that it is reported.
                if (failure == null) {
                    failure = e;
                }
                continue;
            }
            if (!out.isEmpty()) {
                lastRead = stream;
            }
        }
        if (failure != null) {
            refreshTopology.run(); // without waiting: the streams are read again next time
            if (out.isEmpty() && !answered) {
                throw failure;
            }
        }
        if (out.isEmpty() && lateFailure != null) {
            throw lateFailure;
        }
        return out;
    }

    /**
     * The reply of a read in turn, awaited {@value #STALL_MILLIS} ms at most; null when it did not come by then: the
     * read is then left in flight ({@link #takeLateAnswers}, {@link #giveUpParked}).
     */
    private List<StreamMessage<String, byte[]>> awaitOrPark(RedisFuture<List<StreamMessage<String, byte[]>>> reply,
                                                            String stream, Master master) {
        try {
            List<StreamMessage<String, byte[]>> got = reply.get(stalled.contains(master) ? 0 : STALL_MILLIS,
                    TimeUnit.MILLISECONDS);
            stalled.remove(master);
            return got;
        } catch (TimeoutException e) {
            parked.put(stream, new Parked(reply, master,
                    System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(commandTimeoutMillis)));
            stalled.add(master);
            return null;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw cause instanceof RuntimeException r ? r
                    : new RunbusException("reading " + stream + " failed: " + cause, cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reply.cancel(true);
            throw new RunbusException("reading " + stream + " interrupted", e);
        }
    }

    @Override
    public List<LateAnswer> takeLateAnswers() {
        List<LateAnswer> answers = new ArrayList<>();
        for (var it = parked.values().iterator(); it.hasNext(); ) {
            Parked p = it.next();
            if (p.answered()) {
                it.remove();
                stalled.remove(p.master());
                answers.add(new LateAnswer(p.reply().toCompletableFuture().join()));
            }
        }
        return answers;
    }

    /** Whether a read left in flight answered and waits for {@link #takeLateAnswers}. */
    private boolean lateAnswerWaits() {
        return parked.values().stream().anyMatch(Parked::answered);
    }

    /**
     * Gives up the reads left in flight that failed, are past the command timeout or whose slot moved to another
     * master; those answered are left to {@link #takeLateAnswers}. Returns the first failure, or null.
     */
    private RuntimeException giveUpParked() {
        RuntimeException failure = null;
        for (var it = parked.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Parked> e = it.next();
            Parked p = e.getValue();
            RuntimeException failed = null;
            if (p.answered()) {
                continue;
            } else if (p.reply().isDone()) {
                try {
                    p.reply().get();
                } catch (ExecutionException x) {
                    failed = x.getCause() instanceof RedisCommandTimeoutException ? new Stalled("reading " + e.getKey()
                            + " from " + p.master() + " failed: " + x.getCause().getMessage())
                            : x.getCause() instanceof RuntimeException r ? r
                            : new RunbusException("reading " + e.getKey() + " failed: " + x.getCause(), x.getCause());
                } catch (InterruptedException x) {
                    Thread.currentThread().interrupt();
                    return failure;
                }
            } else if (System.nanoTime() - p.deadlineNanos() > 0) {
                p.reply().cancel(true);
                failed = new Stalled("reading " + e.getKey() + " from " + p.master() + " timed out after "
                        + commandTimeoutMillis + " ms");
            } else if (!p.master().equals(masterOrNull(e.getKey()))) {
                p.reply().cancel(true);
                failed = new RunbusException("the slot of " + e.getKey() + " moved from " + p.master()
                        + "; reading again");
            } else {
                continue;
            }
            it.remove();
            if (failure == null) {
                failure = failed;
            }
        }
        return failure;
    }

    private Master masterOrNull(String key) {
        try {
            return masterOf(key);
        } catch (RunbusException e) {
            return null;
        }
    }

    private static boolean oneSlot(Collection<String> streams) {
        return streams.stream().map(SlotHash::getSlot).distinct().count() == 1;
    }

    private Master masterOf(String key) {
        RedisClusterNode node = connection.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
        if (node == null) {
            throw new RunbusException("no master serves the slot of " + key + " (yet)");
        }
        return new Master(node.getUri().getHost(), node.getUri().getPort());
    }

    private List<StreamMessage<String, byte[]>> blocking(String key, Duration block,
            Function<RedisAsyncCommands<String, byte[]>, RedisFuture<List<StreamMessage<String, byte[]>>>> read) {
        try {
            Master master = masterOf(key);
            StatefulRedisConnection<String, byte[]> node = connection.getConnectionAsync(master.host(), master.port())
                    .get(commandTimeoutMillis, TimeUnit.MILLISECONDS);
            // A node connection takes the client's timeout (the command timeout), whatever the cluster connection
            // was given: a read that blocks longer than that would be failed by the client while Redis still
            // holds it. This connection is this reader's own.
            long timeoutMillis = block.toMillis() + commandTimeoutMillis;
            node.setTimeout(Duration.ofMillis(timeoutMillis));
            RedisAsyncCommands<String, byte[]> redis = node.async();
            Long clientId = clientIds.get(master);
            if (clientId == null) {
                clientId = await(redis.clientId(), key, master, commandTimeoutMillis);
                clientIds.put(master, clientId);
            }
            blocked = new Blocked(master, clientId);
            try {
                return await(read.apply(redis), key, master, timeoutMillis);
            } finally {
                blocked = null;
            }
        } catch (RuntimeException e) {
            refreshTopology.run();
            throw e;
        } catch (ExecutionException | TimeoutException e) {
            refreshTopology.run();
            throw new RunbusException("connecting to the master of " + key + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RunbusException("reading " + key + " interrupted", e);
        }
    }

    /**
     * The reply of a command about {@code key} sent to {@code master}; given up after {@code timeoutMillis}, or
     * when the topology names another master for the key (after unblocking it there and waiting a moment for
     * its last answer). A reply given up is cancelled, whatever the reason.
     */
    private <T> T await(RedisFuture<T> reply, String key, Master master, long timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        boolean answered = false;
        try {
            while (true) {
                try {
                    T value = reply.get(STEP_MILLIS, TimeUnit.MILLISECONDS);
                    answered = true;
                    return value;
                } catch (TimeoutException e) {
                    Master now = masterOf(key);
                    if (!now.equals(master)) {
                        T last = lastAnswer(reply, master);
                        if (last != null) {
                            answered = true;
                            return last;
                        }
                        throw new RunbusException("the slot of " + key + " moved from " + master + " to " + now
                                + "; reading again");
                    }
                    if (System.nanoTime() > deadline) {
                        throw new RunbusException("reading " + key + " from " + master + " timed out after "
                                + timeoutMillis + " ms");
                    }
                }
            }
        } catch (ExecutionException e) {
            answered = true;
            Throwable cause = e.getCause();
            throw cause instanceof RuntimeException r ? r
                    : new RunbusException("reading " + key + " failed: " + cause, cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RunbusException("reading " + key + " interrupted", e);
        } finally {
            if (!answered) {
                reply.cancel(true);
            }
        }
    }

    /** Ends the blocking read on {@code master} and waits a moment for its answer; null when none came. */
    private <T> T lastAnswer(RedisFuture<T> reply, Master master) throws InterruptedException {
        Blocked b = blocked;
        if (b != null && b.master().equals(master)) {
            sendUnblock(b);
        }
        try {
            return reply.get(LAST_ANSWER_MILLIS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            return null;
        }
    }

    /** Reads until something came or {@code block} passed, pausing {@link #POLL_MILLIS} between reads. */
    private List<StreamMessage<String, byte[]>> polling(Duration block,
                                                       Supplier<List<StreamMessage<String, byte[]>>> read) {
        long deadline = System.nanoTime() + block.toNanos();
        try {
            while (true) {
                List<StreamMessage<String, byte[]>> got = read.get();
                if (!got.isEmpty() || woken || lateAnswerWaits() || System.nanoTime() >= deadline) {
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
        } catch (Stalled e) {
            throw e; // a master that stopped answering: asking every node for the topology would wait for it too
        } catch (RuntimeException e) {
            refreshTopology.run();
            throw e;
        }
    }

    @Override
    public void unblock() {
        synchronized (poll) {
            woken = true;
            poll.notifyAll();
        }
        Blocked b = blocked;
        if (b != null) {
            sendUnblock(b);
        }
    }

    /** Not awaited: a master that died would hold the caller (a close) for the command timeout. */
    private void sendUnblock(Blocked b) {
        control.getConnectionAsync(b.master().host(), b.master().port())
                .thenAccept(c -> c.async().clientUnblock(b.clientId(), UnblockType.TIMEOUT));
    }

    @Override
    public void reset() {
        blocked = null;
        clientIds.clear();
        // parked reads are kept: their entries were delivered to this consumer, and are taken when they answer
    }

    @Override
    public void close() {
        connection.close();
    }
}
