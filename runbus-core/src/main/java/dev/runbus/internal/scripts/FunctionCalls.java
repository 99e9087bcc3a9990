package dev.runbus.internal.scripts;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.concurrent.CompletableFuture;

/**
 * Scripts called as functions of runbus's {@link FunctionLibrary} (FCALL): the Redis users need {@code +fcall},
 * and no right to run a script of their own. A master without the library answers "Function not found": the
 * library is loaded there ({@link LibraryLoads}) and the call sent again, as EVALSHA's NOSCRIPT is answered with
 * EVAL. The call did not run the first time, so the second send is its only run.
 */
public final class FunctionCalls extends ScriptCalls {

    private final FunctionLibrary library;

    FunctionCalls(FunctionLibrary library) {
        this.library = library;
    }

    public FunctionLibrary library() {
        return library;
    }

    @Override
    boolean functions() {
        return true;
    }

    @Override
    <T> T send(LuaScript script, RedisClusterCommands<String, byte[]> redis, ScriptOutputType type, String[] keys,
               byte[]... args) {
        String function = library.function(script);
        try {
            return redis.fcall(function, type, keys, args);
        } catch (RuntimeException e) {
            if (!LibraryLoads.notFound(e)) {
                throw e;
            }
            LibraryLoads.loadWhereMissing(library, redis);
            return redis.fcall(function, type, keys, args);
        }
    }

    @Override
    <T> CompletableFuture<T> sendAsync(LuaScript script, RedisClusterAsyncCommands<String, byte[]> redis,
                                       ScriptOutputType type, String[] keys, byte[]... args) {
        String function = library.function(script);
        CompletableFuture<T> first = redis.<T>fcall(function, type, keys, args).toCompletableFuture();
        return first.exceptionallyCompose(e -> LibraryLoads.notFound(cause(e))
                ? LibraryLoads.loadWhereMissingAsync(library, redis)
                        .thenCompose(x -> redis.<T>fcall(function, type, keys, args).toCompletableFuture())
                : CompletableFuture.failedFuture(cause(e)));
    }

    /**
     * An FCALL, which has no form that carries the code: a master that lost the library answers it "Function not
     * found". It is not sent again, which would put it behind what the caller sent meanwhile: the library is loaded
     * there and the call fails with {@link ScriptNotRun}, for the caller's next call to run. The bus loads the
     * library at connect, so this is the rare case of a master that lost it since.
     */
    @Override
    <T> CompletableFuture<T> sendInOrder(LuaScript script, RedisClusterAsyncCommands<String, byte[]> redis,
                                         ScriptOutputType type, String[] keys, byte[]... args) {
        CompletableFuture<T> reply = redis.<T>fcall(library.function(script), type, keys, args).toCompletableFuture();
        return reply.exceptionallyCompose(e -> LibraryLoads.notFound(cause(e))
                ? LibraryLoads.loadWhereMissingAsync(library, redis)
                        .thenCompose(x -> CompletableFuture.<T>failedFuture(new ScriptNotRun(script.name(), cause(e))))
                : CompletableFuture.failedFuture(cause(e)));
    }
}
