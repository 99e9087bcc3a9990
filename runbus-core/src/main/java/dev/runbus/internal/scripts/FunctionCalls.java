package dev.runbus.internal.scripts;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Scripts called as functions of runbus's {@link FunctionLibrary} (FCALL): the Redis users need {@code +fcall},
 * and no right to run a script of their own. A master without the library answers "Function not found": the
 * library is loaded there ({@link LibraryLoads#loadForCall}: on the master the call goes to, not on every master, so
 * that a hung one holds up only its own calls) and the call sent again, as EVALSHA's NOSCRIPT is answered with EVAL;
 * if another node answered (a slot in migration), on every master. A call answered so did not run, so each send is
 * its only run.
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
        Supplier<T> call = () -> redis.fcall(function, type, keys, args);
        return againIfNotFound(() -> againIfNotFound(call, () -> LibraryLoads.loadForCall(library, redis, keys), call),
                () -> LibraryLoads.loadOnEveryMaster(library, redis), call);
    }

    /** {@code first}'s answer, or when it is "Function not found", {@code then}'s once {@code load} ran. */
    private static <T> T againIfNotFound(Supplier<T> first, Runnable load, Supplier<T> then) {
        try {
            return first.get();
        } catch (RuntimeException e) {
            if (!LibraryLoads.notFound(e)) {
                throw e;
            }
        }
        load.run();
        return then.get();
    }

    @Override
    <T> CompletableFuture<T> sendAsync(LuaScript script, RedisClusterAsyncCommands<String, byte[]> redis,
                                       ScriptOutputType type, String[] keys, byte[]... args) {
        String function = library.function(script);
        Supplier<CompletableFuture<T>> call = () -> redis.<T>fcall(function, type, keys, args).toCompletableFuture();
        CompletableFuture<T> reply = againIfNotFound(call.get(),
                () -> LibraryLoads.loadForCallAsync(library, redis, keys), call);
        return againIfNotFound(reply, () -> LibraryLoads.loadOnEveryMasterAsync(library, redis), call);
    }

    /** {@code reply}, or when it is "Function not found", {@code call} sent again once {@code load} is done. */
    private static <T> CompletableFuture<T> againIfNotFound(CompletableFuture<T> reply,
                                                            Supplier<CompletableFuture<Void>> load,
                                                            Supplier<CompletableFuture<T>> call) {
        return reply.exceptionallyCompose(e -> LibraryLoads.notFound(cause(e))
                ? load.get().thenCompose(x -> call.get())
                : CompletableFuture.failedFuture(cause(e)));
    }

    /**
     * An FCALL, which has no form that carries the code: a master that lost the library answers it "Function not
     * found". It is not sent again, which would put it behind what the caller sent meanwhile: the library is loaded
     * where the call went ({@link LibraryLoads#loadForCall}) and the call fails with {@link ScriptNotRun}, for the
     * caller's next call to run. The bus loads the library at connect, so this is the rare case of a master that lost
     * it since.
     */
    @Override
    <T> CompletableFuture<T> sendInOrder(LuaScript script, RedisClusterAsyncCommands<String, byte[]> redis,
                                         ScriptOutputType type, String[] keys, byte[]... args) {
        CompletableFuture<T> reply = redis.<T>fcall(library.function(script), type, keys, args).toCompletableFuture();
        return reply.exceptionallyCompose(e -> LibraryLoads.notFound(cause(e))
                ? LibraryLoads.loadForCallAsync(library, redis, keys)
                        .thenCompose(x -> CompletableFuture.<T>failedFuture(new ScriptNotRun(script.name(), cause(e))))
                : CompletableFuture.failedFuture(cause(e)));
    }
}
