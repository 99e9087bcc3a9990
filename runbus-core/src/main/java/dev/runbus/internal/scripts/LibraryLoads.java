package dev.runbus.internal.scripts;

import dev.runbus.RunbusException;
import dev.runbus.internal.redis.RedisLink;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
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
     * FCALL learns it so); returns the masters it was loaded on.
     *
     * @throws LibraryMissing where it lacks and the user may not load it
     */
    public static List<String> ensure(FunctionLibrary library, List<RedisLink.Master> masters) {
        List<String> loaded = new java.util.ArrayList<>();
        for (RedisLink.Master m : masters) {
            boolean present;
            try {
                present = present(library, m.redis());
            } catch (RedisCommandExecutionException e) {
                if (hasError(e, "noperm")) {
                    // The user of an EVAL deployment upgraded to a runbus that calls functions: say both ways out.
                    throw new RunbusException("this Redis user may not call runbus's functions on " + m.address()
                            + " (" + e.getMessage() + "): on Redis 7 and later runbus calls its scripts as a function "
                            + "library; grant the user +fcall (and run `runbus migrate --redis-url …` as a user allowed "
                            + "+function|load), or set scriptMode EVAL (--redis-scripts eval) to keep +eval +evalsha "
                            + "(docs/security.md)", e);
                }
                throw e;
            }
            if (!present && load(library, m.redis(), m.address())) {
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

    /**
     * Loads the library where a call sent through {@code redis} found it missing: on one server, that server; on a
     * cluster, every master that lacks it. Not only the master of the call's key as the client sees it: while a slot
     * migrates, the call may have been answered by the node importing it (Lettuce follows the ASK), and a node the
     * client does not know as the slot's master yet may be the one without the library.
     */
    static void loadWhereMissing(FunctionLibrary library, RedisClusterCommands<String, byte[]> redis) {
        if (redis instanceof RedisAdvancedClusterCommands<String, byte[]> cluster) {
            StatefulRedisClusterConnection<String, byte[]> c = cluster.getStatefulConnection();
            for (RedisClusterNode node : masters(c)) {
                load(library, c.getConnection(node.getNodeId()).sync(), address(node));
            }
            return;
        }
        load(library, redis, "the Redis server");
    }

    /** Like {@link #loadWhereMissing}, without waiting. */
    static CompletableFuture<Void> loadWhereMissingAsync(FunctionLibrary library,
                                                         RedisClusterAsyncCommands<String, byte[]> redis) {
        if (redis instanceof RedisAdvancedClusterAsyncCommands<String, byte[]> cluster) {
            StatefulRedisClusterConnection<String, byte[]> c = cluster.getStatefulConnection();
            List<CompletableFuture<Void>> loads = new java.util.ArrayList<>();
            for (RedisClusterNode node : masters(c)) {
                loads.add(c.getConnectionAsync(node.getNodeId()).thenCompose(
                        n -> loaded(library, n.async().functionLoad(library.code()).toCompletableFuture(),
                                address(node))));
            }
            return CompletableFuture.allOf(loads.toArray(new CompletableFuture<?>[0]));
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
            log.info("loaded runbus's Redis function library {} on {}", library.name(), where);
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
            if (e == null) {
                log.info("loaded runbus's Redis function library {} on {}", library.name(), where);
                return (Void) null;
            }
            if (hasError(ScriptCalls.cause(e), "already exists")) {
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
