package dev.runbus.internal.scripts;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.concurrent.CompletableFuture;

/**
 * Scripts sent as scripts: called by their SHA-1 (EVALSHA); when the server does not know one yet (new server,
 * SCRIPT FLUSH, failover) it is sent whole once (EVAL), which caches it again. The Redis users need {@code +eval
 * +evalsha}: Redis 6.2, which has no functions, or {@link dev.runbus.ScriptMode#EVAL}.
 */
final class EvalCalls extends ScriptCalls {

    static final EvalCalls INSTANCE = new EvalCalls();

    private EvalCalls() {
    }

    @Override
    boolean functions() {
        return false;
    }

    @Override
    <T> T send(LuaScript script, RedisClusterCommands<String, byte[]> redis, ScriptOutputType type, String[] keys,
               byte[]... args) {
        try {
            return redis.evalsha(script.sha(), type, keys, args);
        } catch (RedisNoScriptException e) {
            return redis.eval(script.source(), type, keys, args);
        }
    }

    @Override
    <T> CompletableFuture<T> sendAsync(LuaScript script, RedisClusterAsyncCommands<String, byte[]> redis,
                                       ScriptOutputType type, String[] keys, byte[]... args) {
        CompletableFuture<T> bySha = redis.<T>evalsha(script.sha(), type, keys, args).toCompletableFuture();
        return bySha.exceptionallyCompose(e -> cause(e) instanceof RedisNoScriptException
                ? redis.<T>eval(script.source(), type, keys, args).toCompletableFuture()
                : CompletableFuture.failedFuture(cause(e)));
    }

    /**
     * Sends the whole script (EVAL), never its SHA: the command cannot be answered NOSCRIPT, so it needs no second
     * send from the I/O thread. Redis still compiles the script once and finds it by its SHA afterwards.
     */
    @Override
    <T> CompletableFuture<T> sendInOrder(LuaScript script, RedisClusterAsyncCommands<String, byte[]> redis,
                                         ScriptOutputType type, String[] keys, byte[]... args) {
        return redis.<T>eval(script.source(), type, keys, args).toCompletableFuture();
    }
}
