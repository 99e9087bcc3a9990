package dev.runbus.internal;

import dev.runbus.RunbusException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

/**
 * Puts runbus's {@link FunctionLibrary} on the masters that lack it. Each master keeps its own functions (replicas
 * get them by replication), so a master can lack the library while others have it: a new node, a node a slot moved
 * to, a server restarted without persistence, a FUNCTION FLUSH. FCALL then answers {@code ERR Function not found},
 * and the call is sent again once the library is loaded on the master of its key (as EVALSHA's NOSCRIPT is answered
 * with EVAL). A user without {@code +function|load} gets {@link LibraryMissing}, which says what to do.
 */
final class LibraryLoads {

    private LibraryLoads() {
    }

    /** What a master answers an FCALL of a function it does not have (also of another runbus version's). */
    static boolean notFound(Throwable e) {
        return hasError(e, "function not found");
    }

    /**
     * Loads the library on every master that lacks it, finding out with the probe function (a user allowed only
     * FCALL learns it so); returns the masters it was loaded on.
     *
     * @throws LibraryMissing where it lacks and the user may not load it
     */
    static List<String> ensure(FunctionLibrary library, List<RedisLink.Master> masters) {
        List<String> loaded = new java.util.ArrayList<>();
        for (RedisLink.Master m : masters) {
            if (!present(library, m.redis()) && load(library, m.redis(), m.address())) {
                loaded.add(m.address());
            }
        }
        return loaded;
    }

    /** Whether the master {@code redis} reaches has this library. */
    static boolean present(FunctionLibrary library, RedisClusterCommands<String, byte[]> redis) {
        try {
            redis.fcall(library.function(FunctionLibrary.PROBE), ScriptOutputType.VALUE, new String[0]);
            return true;
        } catch (RedisCommandExecutionException e) {
            if (notFound(e)) {
                return false;
            }
            throw e;
        }
    }

    /** Loads the library on the master of {@code keys[0]}, where {@code redis} sent a call that found it missing. */
    static void loadForKey(FunctionLibrary library, RedisClusterCommands<String, byte[]> redis, String[] keys) {
        if (redis instanceof RedisAdvancedClusterCommands<String, byte[]> cluster && keys.length > 0) {
            RedisClusterNode node = masterOf(cluster.getStatefulConnection(), keys[0]);
            if (node != null) {
                load(library, cluster.getStatefulConnection().getConnection(node.getNodeId()).sync(), address(node));
                return;
            }
        }
        load(library, redis, "the Redis server");
    }

    /** Like {@link #loadForKey}, without waiting. */
    static CompletableFuture<Void> loadForKeyAsync(FunctionLibrary library,
                                                   RedisClusterAsyncCommands<String, byte[]> redis, String[] keys) {
        if (redis instanceof RedisAdvancedClusterAsyncCommands<String, byte[]> cluster && keys.length > 0) {
            StatefulRedisClusterConnection<String, byte[]> c = cluster.getStatefulConnection();
            RedisClusterNode node = masterOf(c, keys[0]);
            if (node != null) {
                return c.getConnectionAsync(node.getNodeId()).thenCompose(
                        n -> loaded(library, n.async().functionLoad(library.code()).toCompletableFuture(),
                                address(node)));
            }
        }
        return loaded(library, redis.functionLoad(library.code()).toCompletableFuture(), "the Redis server");
    }

    /**
     * Loads the library where {@code redis} goes; false when it was there already (another process loaded it
     * meanwhile).
     */
    static boolean load(FunctionLibrary library, RedisClusterCommands<String, byte[]> redis, String where) {
        try {
            redis.functionLoad(library.code());
            return true;
        } catch (RedisCommandExecutionException e) {
            if (hasError(e, "already exists")) {
                return false;
            }
            throw refused(library, where, e);
        }
    }

    private static CompletableFuture<Void> loaded(FunctionLibrary library, CompletableFuture<String> reply,
                                                  String where) {
        return reply.handle((ok, e) -> {
            if (e == null || hasError(ScriptCalls.cause(e), "already exists")) {
                return (Void) null;
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

    private static RedisClusterNode masterOf(StatefulRedisClusterConnection<String, byte[]> c, String key) {
        return c.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
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
