package dev.runbus.internal.scripts;

import dev.runbus.RunbusException;
import dev.runbus.internal.redis.RedisLink;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts runbus's {@link FunctionLibrary} on the masters that lack it. Each master keeps its own functions (replicas
 * get them by replication), so a master can lack the library while others have it: a new node, a node a slot moved
 * to, a server restarted without persistence, a FUNCTION FLUSH. FCALL then answers {@code ERR Function not found},
 * and the call is sent again once the library is loaded where it lacked (as EVALSHA's NOSCRIPT is answered with
 * EVAL). A user without {@code +function|load} gets {@link LibraryMissing}, which says what to do.
 */
public final class LibraryLoads {

    private static final Logger log = LoggerFactory.getLogger(LibraryLoads.class);

    private LibraryLoads() {
    }

    /** What a master answers an FCALL of a function it does not have (also of another runbus version's). */
    static boolean notFound(Throwable e) {
        return hasError(e, "function not found");
    }

    /**
     * Loads the library on every master that lacks it, finding out with the probe function (a user allowed only
     * FCALL learns it so); returns the masters it was loaded on. The masters are asked all at once, each within
     * {@code timeoutMillis}: one that does not answer by then (stopped, hung, unreachable) is skipped with a warning, so
     * that a bus connects while a master is down (rule 14), and a call that finds the library missing there later loads
     * it ({@link #loadForCall}). Fails when no master answered.
     *
     * @throws LibraryMissing where it lacks and the user may not load it
     */
    public static List<String> ensure(FunctionLibrary library, List<RedisLink.Master> masters, long timeoutMillis) {
        Map<String, CompletableFuture<Boolean>> checks = new LinkedHashMap<>();
        for (RedisLink.Master m : masters) {
            checks.put(m.address(), m.connection().thenCompose(c -> ensureOn(library, c.async(), m.address())));
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        List<String> loaded = new ArrayList<>();
        RunbusException unanswered = null;
        boolean answered = false;
        for (Map.Entry<String, CompletableFuture<Boolean>> check : checks.entrySet()) {
            Throwable failure;
            try {
                if (check.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    loaded.add(check.getKey());
                }
                answered = true;
                continue;
            } catch (TimeoutException e) {
                failure = e;
            } catch (ExecutionException e) {
                failure = ScriptCalls.cause(e.getCause());
                if (!(failure instanceof RedisCommandTimeoutException || failure instanceof RedisConnectionException)) {
                    throw failure instanceof RuntimeException r ? r : new RunbusException(failure.toString(), failure);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RunbusException("interrupted while checking runbus's function library", e);
            }
            check.getValue().cancel(true);
            log.warn("master {} did not answer whether it has runbus's function library {} ({}); a call that finds it "
                    + "missing there loads it", check.getKey(), library.name(), failure.toString());
            if (unanswered == null) {
                unanswered = new RunbusException("no master answered whether it has runbus's function library "
                        + library.name() + ": " + failure, failure);
            }
        }
        if (!answered && unanswered != null) {
            throw unanswered;
        }
        return loaded;
    }

    /** Whether the library was loaded on the master {@code redis} reaches (false: it was there). */
    private static CompletableFuture<Boolean> ensureOn(FunctionLibrary library,
                                                       RedisClusterAsyncCommands<String, byte[]> redis, String address) {
        CompletableFuture<Object> probe = redis.fcall(library.function(FunctionLibrary.PROBE), ScriptOutputType.VALUE,
                new String[0]).toCompletableFuture();
        return probe.handle((name, e) -> {
            if (e == null) {
                return CompletableFuture.completedFuture(false);
            }
            Throwable cause = ScriptCalls.cause(e);
            if (notFound(cause)) {
                return loaded(library, redis.functionLoad(library.code()).toCompletableFuture(), address);
            }
            return CompletableFuture.<Boolean>failedFuture(hasError(cause, "noperm") ? mayNotCall(address, cause) : cause);
        }).thenCompose(loaded -> loaded);
    }

    /** The user of an EVAL deployment upgraded to a runbus that calls functions: says both ways out. */
    private static RunbusException mayNotCall(String address, Throwable refusal) {
        return new RunbusException("this Redis user may not call runbus's functions on " + address + " ("
                + refusal.getMessage() + "): on Redis 7 and later runbus calls its scripts as a function library; grant "
                + "the user +fcall (and run `runbus migrate --redis-url …` as a user allowed +function|load), or set "
                + "scriptMode EVAL (--redis-scripts eval) to keep +eval +evalsha (docs/security.md)", refusal);
    }

    /**
     * Loads the library where a call of {@code keys} sent through {@code redis} found it missing: on one server, that
     * server; on a cluster, the master the client sends the call to (its first key's slot's master), and only that one,
     * so that the call waits for no other master (a hung one would hold it for the command timeout: rule 14). A call
     * of no keys, which a cluster may send anywhere, loads every master that lacks it.
     */
    static void loadForCall(FunctionLibrary library, RedisClusterCommands<String, byte[]> redis, String[] keys) {
        if (redis instanceof RedisAdvancedClusterCommands<String, byte[]> cluster) {
            StatefulRedisClusterConnection<String, byte[]> c = cluster.getStatefulConnection();
            RedisClusterNode master = masterOf(c, keys);
            if (master == null) {
                loadOnEveryMaster(library, redis);
                return;
            }
            load(library, c.getConnection(master.getNodeId()).sync(), address(master));
            return;
        }
        load(library, redis, "the Redis server");
    }

    /** Like {@link #loadForCall}, without waiting. */
    static CompletableFuture<Void> loadForCallAsync(FunctionLibrary library,
                                                    RedisClusterAsyncCommands<String, byte[]> redis, String[] keys) {
        if (redis instanceof RedisAdvancedClusterAsyncCommands<String, byte[]> cluster) {
            StatefulRedisClusterConnection<String, byte[]> c = cluster.getStatefulConnection();
            RedisClusterNode master = masterOf(c, keys);
            return master == null ? loadOnEveryMasterAsync(library, redis) : loadAsync(library, c, master);
        }
        return loaded(library, redis.functionLoad(library.code()).toCompletableFuture(), "the Redis server")
                .thenApply(x -> null);
    }

    /**
     * Loads the library on every master of a cluster that lacks it (on one server, that server): for a call still
     * answered "Function not found" after {@link #loadForCall}, which was answered by another node than the client
     * sends it to: while a slot migrates, the node importing it (Lettuce follows the ASK), or a master the client's
     * topology does not name for the slot yet. Only then does a call wait for every master.
     */
    static void loadOnEveryMaster(FunctionLibrary library, RedisClusterCommands<String, byte[]> redis) {
        if (redis instanceof RedisAdvancedClusterCommands<String, byte[]> cluster) {
            StatefulRedisClusterConnection<String, byte[]> c = cluster.getStatefulConnection();
            for (RedisClusterNode node : masters(c)) {
                load(library, c.getConnection(node.getNodeId()).sync(), address(node));
            }
            return;
        }
        load(library, redis, "the Redis server");
    }

    /** Like {@link #loadOnEveryMaster}, without waiting. */
    static CompletableFuture<Void> loadOnEveryMasterAsync(FunctionLibrary library,
                                                          RedisClusterAsyncCommands<String, byte[]> redis) {
        if (redis instanceof RedisAdvancedClusterAsyncCommands<String, byte[]> cluster) {
            StatefulRedisClusterConnection<String, byte[]> c = cluster.getStatefulConnection();
            List<CompletableFuture<Void>> loads = new java.util.ArrayList<>();
            for (RedisClusterNode node : masters(c)) {
                loads.add(loadAsync(library, c, node));
            }
            return CompletableFuture.allOf(loads.toArray(new CompletableFuture<?>[0]));
        }
        return loaded(library, redis.functionLoad(library.code()).toCompletableFuture(), "the Redis server")
                .thenApply(x -> null);
    }

    private static CompletableFuture<Void> loadAsync(FunctionLibrary library,
                                                     StatefulRedisClusterConnection<String, byte[]> c,
                                                     RedisClusterNode node) {
        return c.getConnectionAsync(node.getNodeId()).thenCompose(
                n -> loaded(library, n.async().functionLoad(library.code()).toCompletableFuture(), address(node)))
                .thenApply(x -> null);
    }

    /** The master the client's topology names for the slot of {@code keys}' first key; null for a call of no keys. */
    private static RedisClusterNode masterOf(StatefulRedisClusterConnection<String, byte[]> c, String[] keys) {
        return keys.length == 0 ? null : c.getPartitions().getMasterBySlot(SlotHash.getSlot(keys[0]));
    }

    /**
     * Loads the library where {@code redis} goes; false when it was there already (another process loaded it
     * meanwhile).
     */
    static boolean load(FunctionLibrary library, RedisClusterCommands<String, byte[]> redis, String where) {
        try {
            redis.functionLoad(library.code());
            log.info("loaded runbus's Redis function library {} on {}", library.name(), where);
            return true;
        } catch (RedisCommandExecutionException e) {
            if (hasError(e, "already exists")) {
                return false;
            }
            throw refused(library, where, e);
        }
    }

    /** Whether {@code reply}, a FUNCTION LOAD's, loaded the library (false: it was there already). */
    private static CompletableFuture<Boolean> loaded(FunctionLibrary library, CompletableFuture<String> reply,
                                                     String where) {
        return reply.handle((ok, e) -> {
            if (e == null) {
                log.info("loaded runbus's Redis function library {} on {}", library.name(), where);
                return true;
            }
            if (hasError(ScriptCalls.cause(e), "already exists")) {
                return false;
            }
            throw refused(library, where, ScriptCalls.cause(e));
        });
    }

    private static RunbusException refused(FunctionLibrary library, String where, Throwable e) {
        if (hasError(e, "noperm")) {
            return new LibraryMissing(library, where, e);
        }
        return new RunbusException("cannot load runbus's Redis function library " + library.name() + " on " + where
                + ": " + e.getMessage(), e);
    }

    private static List<RedisClusterNode> masters(StatefulRedisClusterConnection<String, byte[]> c) {
        List<RedisClusterNode> out = new java.util.ArrayList<>();
        for (RedisClusterNode node : c.getPartitions()) {
            if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                out.add(node);
            }
        }
        return out;
    }

    private static String address(RedisClusterNode node) {
        return node.getUri() == null ? node.getNodeId() : node.getUri().getHost() + ":" + node.getUri().getPort();
    }

    /** Whether a Redis error among {@code e}'s causes contains {@code text} (lower case). */
    private static boolean hasError(Throwable e, String text) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RedisCommandExecutionException
                    && String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT).contains(text)) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }
}
