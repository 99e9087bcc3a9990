package dev.runbus.internal.scripts;

import dev.runbus.RunbusException;
import dev.runbus.ScriptMode;
import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.RedisVersion;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * How one bus runs its {@link LuaScript}s: sent as scripts ({@link EvalCalls}) or called in runbus's function
 * library ({@link FunctionCalls}), chosen once at connect ({@link #choose}).
 *
 * <p>A call by {@link #run} or {@link #runAsync} is sent again when Redis Cluster answers {@code TRYAGAIN}: while
 * a slot migrates, a script naming several keys of it of which some do not exist on the node asked (a dead-letter
 * stream or call record not created yet, an empty delay set) is refused so for the whole migration, and neither
 * Redis nor Lettuce retries it. {@code TRYAGAIN} means the script did not run, so sending it again is safe. The
 * pauses start at {@value #TRYAGAIN_FIRST_PAUSE_MILLIS} ms and double up to {@value #TRYAGAIN_MAX_PAUSE_MILLIS} ms;
 * once a pause would end more than {@value #TRYAGAIN_BUDGET_MILLIS} ms after the first send, the error goes to the
 * caller (whose own loop tries again later), so a migration stuck half-way is not waited on forever.
 */
public abstract class ScriptCalls {

    static final long TRYAGAIN_FIRST_PAUSE_MILLIS = 10;
    static final long TRYAGAIN_MAX_PAUSE_MILLIS = 250;
    static final long TRYAGAIN_BUDGET_MILLIS = 3_000;

    /**
     * The calls {@code mode} asks for on a server of {@code version}: AUTO takes functions where the server has them.
     *
     * @throws RunbusException for FUNCTIONS on a server without functions
     */
    public static ScriptCalls choose(ScriptMode mode, RedisVersion version) {
        return switch (mode) {
            case EVAL -> EvalCalls.INSTANCE;
            case AUTO -> version.hasFunctions() ? new FunctionCalls(FunctionLibrary.runbus()) : EvalCalls.INSTANCE;
            case FUNCTIONS -> {
                if (!version.hasFunctions()) {
                    throw new RunbusException("scriptMode FUNCTIONS needs Redis 7.0 or later, or Valkey; the server is "
                            + version + ": use AUTO (EVAL on this server) or EVAL");
                }
                yield new FunctionCalls(FunctionLibrary.runbus());
            }
        };
    }

    /** The calls AUTO chooses for the server {@code redis} reaches: for tests that build the parts by hand. */
    public static ScriptCalls auto(RedisClusterCommands<String, byte[]> redis) {
        return choose(ScriptMode.AUTO, RedisVersion.parse(redis.info("server")));
    }

    /** Whether these calls are FCALLs (the ACL users then need {@code +fcall}, not {@code +eval}). */
    abstract boolean functions();

    /** One send of {@code script}, with whatever second send a server that does not know it yet needs. */
    abstract <T> T send(LuaScript script, RedisClusterCommands<String, byte[]> redis, ScriptOutputType type,
                        String[] keys, byte[]... args);

    /** Like {@link #send}, without waiting; the future completes on the client's I/O thread. */
    abstract <T> CompletableFuture<T> sendAsync(LuaScript script, RedisClusterAsyncCommands<String, byte[]> redis,
                                                ScriptOutputType type, String[] keys, byte[]... args);

    /**
     * One send, never a second, so that it stays in order with the caller's other commands on the connection: for
     * small, periodic scripts. A call the server could not run fails with {@link ScriptNotRun}.
     */
    abstract <T> CompletableFuture<T> sendInOrder(LuaScript script, RedisClusterAsyncCommands<String, byte[]> redis,
                                                  ScriptOutputType type, String[] keys, byte[]... args);

    public <T> T run(LuaScript script, RedisClusterCommands<String, byte[]> redis, ScriptOutputType type, String[] keys,
              byte[]... args) {
        long start = System.nanoTime();
        long pause = TRYAGAIN_FIRST_PAUSE_MILLIS;
        while (true) {
            try {
                return send(script, redis, type, keys, args);
            } catch (RuntimeException e) {
                if (e instanceof LibraryMissing) {
                    throw e; // says itself what to do
                }
                if (!tryAgain(e) || !withinBudget(start, pause)) {
                    throw new RunbusException("script " + script.name() + " failed: " + Calls.describe(e), e);
                }
            }
            try {
                Thread.sleep(pause); // a pause of the retry, not a wait for another thread
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new RunbusException("script " + script.name() + " interrupted while its slot migrates",
                        interrupted);
            }
            pause = Math.min(TRYAGAIN_MAX_PAUSE_MILLIS, pause * 2);
        }
    }

    /**
     * Like {@link #run}, without waiting: commands sent this way from several threads share the connection's
     * pipeline. The future completes on the client's I/O thread; keep its callbacks short.
     */
    public <T> CompletableFuture<T> runAsync(LuaScript script, RedisClusterAsyncCommands<String, byte[]> redis,
                                      ScriptOutputType type, String[] keys, byte[]... args) {
        return named(script, retryingTryAgain(() -> this.<T>sendAsync(script, redis, type, keys, args),
                System.nanoTime(), TRYAGAIN_FIRST_PAUSE_MILLIS));
    }

    /**
     * {@link #sendInOrder}, not sent again on TRYAGAIN: a later send would lose the order with the caller's other
     * commands, which is what this call is for. A script of one key is never answered TRYAGAIN (Lettuce follows
     * the ASK).
     */
    <T> CompletableFuture<T> runInOrder(LuaScript script, RedisClusterAsyncCommands<String, byte[]> redis,
                                        ScriptOutputType type, String[] keys, byte[]... args) {
        return named(script, sendInOrder(script, redis, type, keys, args));
    }

    /**
     * {@code send}'s reply, sent again after a pause while it is {@code TRYAGAIN} and the budget lasts. The pause is
     * timed off the client's I/O thread (the JDK's delaying thread), and the send made from there: it only writes.
     * A call sent again goes behind whatever the caller pipelined meanwhile: if the migration ends in between, a
     * later call of the same slot can run before it. For the fenced acks of an ordered partition that is two entries
     * of different keys acked out of order (an entry's next one of the same key waits for its ack's answer), which
     * leaves order per key as it was.
     */
    private static <T> CompletableFuture<T> retryingTryAgain(Supplier<CompletableFuture<T>> send, long start,
                                                             long pause) {
        return send.get().exceptionallyCompose(e -> {
            if (!tryAgain(cause(e)) || !withinBudget(start, pause)) {
                return CompletableFuture.failedFuture(cause(e));
            }
            Executor later = CompletableFuture.delayedExecutor(pause, TimeUnit.MILLISECONDS, Runnable::run);
            return CompletableFuture.supplyAsync(() -> null, later).thenCompose(
                    x -> retryingTryAgain(send, start, Math.min(TRYAGAIN_MAX_PAUSE_MILLIS, pause * 2)));
        });
    }

    /** Redis Cluster's answer to a multi-key command whose keys a slot migration splits: the command did not run. */
    static boolean tryAgain(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RedisCommandExecutionException && String.valueOf(t.getMessage()).startsWith("TRYAGAIN")) {
                return true;
            }
        }
        return false;
    }

    /** Whether a pause of {@code pauseMillis} from now still ends within the budget counted from {@code start}. */
    private static boolean withinBudget(long start, long pauseMillis) {
        return System.nanoTime() - start + TimeUnit.MILLISECONDS.toNanos(pauseMillis)
                <= TimeUnit.MILLISECONDS.toNanos(TRYAGAIN_BUDGET_MILLIS);
    }

    /** A failure of the reply, as the {@link RunbusException} that names the script (or says what to do). */
    private static <T> CompletableFuture<T> named(LuaScript script, CompletableFuture<T> reply) {
        return reply.exceptionallyCompose(e -> CompletableFuture.failedFuture(
                cause(e) instanceof LibraryMissing || cause(e) instanceof ScriptNotRun ? cause(e)
                : new RunbusException("script " + script.name() + " failed: " + Calls.describe(cause(e)), cause(e))));
    }

    /** What failed, without the CompletionException a dependent stage wraps it in. */
    static Throwable cause(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }
}
