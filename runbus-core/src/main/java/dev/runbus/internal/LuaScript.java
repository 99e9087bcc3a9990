package dev.runbus.internal;

import dev.runbus.RunbusException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One Lua script from {@code resources/dev/runbus/lua}. Called by its SHA-1 (EVALSHA); when the server does
 * not know it yet (new server, SCRIPT FLUSH, failover) it is sent whole once (EVAL), which caches it again.
 *
 * <p>A call by {@link #run} or {@link #runAsync} is sent again when Redis Cluster answers {@code TRYAGAIN}: while
 * a slot migrates, a script naming several keys of it of which some do not exist on the node asked (a dead-letter
 * stream or call record not created yet, an empty delay set) is refused so for the whole migration, and neither
 * Redis nor Lettuce retries it. {@code TRYAGAIN} means the script did not run, so sending it again is safe. The
 * pauses start at {@value #TRYAGAIN_FIRST_PAUSE_MILLIS} ms and double up to {@value #TRYAGAIN_MAX_PAUSE_MILLIS} ms;
 * once a pause would end more than {@value #TRYAGAIN_BUDGET_MILLIS} ms after the first send, the error goes to the
 * caller (whose own loop tries again later), so a migration stuck half-way is not waited on forever.
 */
final class LuaScript {

    static final long TRYAGAIN_FIRST_PAUSE_MILLIS = 10;
    static final long TRYAGAIN_MAX_PAUSE_MILLIS = 250;
    static final long TRYAGAIN_BUDGET_MILLIS = 3_000;

    private final String name;
    private final String source;
    private final String sha;

    private LuaScript(String name, String source) {
        this.name = name;
        this.source = source;
        this.sha = sha1(source);
    }

    static LuaScript load(String name) {
        String path = "/dev/runbus/lua/" + name + ".lua";
        try (InputStream in = LuaScript.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + path);
            }
            return new LuaScript(name, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read script resource " + path, e);
        }
    }

    <T> T run(RedisClusterCommands<String, byte[]> redis, ScriptOutputType type, String[] keys, byte[]... args) {
        long start = System.nanoTime();
        long pause = TRYAGAIN_FIRST_PAUSE_MILLIS;
        while (true) {
            try {
                try {
                    return redis.evalsha(sha, type, keys, args);
                } catch (RedisNoScriptException e) {
                    return redis.eval(source, type, keys, args);
                }
            } catch (RuntimeException e) {
                if (!tryAgain(e) || !withinBudget(start, pause)) {
                    throw new RunbusException("script " + name + " failed: " + Calls.describe(e), e);
                }
            }
            try {
                Thread.sleep(pause); // a pause of the retry, not a wait for another thread
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new RunbusException("script " + name + " interrupted while its slot migrates", interrupted);
            }
            pause = Math.min(TRYAGAIN_MAX_PAUSE_MILLIS, pause * 2);
        }
    }

    /**
     * Like {@link #run}, without waiting: commands sent this way from several threads share the connection's
     * pipeline. The future completes on the client's I/O thread; keep its callbacks short.
     */
    <T> CompletableFuture<T> runAsync(RedisClusterAsyncCommands<String, byte[]> redis, ScriptOutputType type, String[] keys,
                                      byte[]... args) {
        return named(retryingTryAgain(() -> {
            CompletableFuture<T> bySha = redis.<T>evalsha(sha, type, keys, args).toCompletableFuture();
            return bySha.exceptionallyCompose(e -> cause(e) instanceof RedisNoScriptException
                    ? redis.<T>eval(source, type, keys, args).toCompletableFuture()
                    : CompletableFuture.failedFuture(cause(e)));
        }, System.nanoTime(), TRYAGAIN_FIRST_PAUSE_MILLIS));
    }

    /**
     * Sends the whole script (EVAL), never its SHA: the command cannot be answered NOSCRIPT, so it needs no
     * second send from the I/O thread, and is ordered with the caller's other commands on the connection.
     * Redis still compiles the script once and finds it by its SHA afterwards. For small, periodic scripts.
     */
    <T> CompletableFuture<T> evalAsync(RedisClusterAsyncCommands<String, byte[]> redis, ScriptOutputType type,
                                       String[] keys, byte[]... args) {
        // Not sent again on TRYAGAIN: a later send would lose the order with the caller's other commands, which is
        // what this call is for. A script of one key is never answered TRYAGAIN (Lettuce follows the ASK).
        return named(redis.<T>eval(source, type, keys, args).toCompletableFuture());
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

    /** A failure of the reply, as the {@link RunbusException} that names this script. */
    private <T> CompletableFuture<T> named(CompletableFuture<T> reply) {
        return reply.exceptionallyCompose(e -> CompletableFuture.failedFuture(
                new RunbusException("script " + name + " failed: " + Calls.describe(cause(e)), cause(e))));
    }

    /** What failed, without the CompletionException a dependent stage wraps it in. */
    private static Throwable cause(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    /** Arguments as bytes: strings as UTF-8, numbers in decimal. */
    static byte[][] args(Object... values) {
        byte[][] out = new byte[values.length][];
        for (int i = 0; i < values.length; i++) {
            out[i] = WireFormat.utf8(String.valueOf(values[i]));
        }
        return out;
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by every JVM", e);
        }
    }
}
