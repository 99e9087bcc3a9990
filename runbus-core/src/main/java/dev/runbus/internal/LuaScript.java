package dev.runbus.internal;

import dev.runbus.RunbusException;
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

/**
 * One Lua script from {@code resources/dev/runbus/lua}. Called by its SHA-1 (EVALSHA); when the server does
 * not know it yet (new server, SCRIPT FLUSH, failover) it is sent whole once (EVAL), which caches it again.
 */
final class LuaScript {

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
        try {
            try {
                return redis.evalsha(sha, type, keys, args);
            } catch (RedisNoScriptException e) {
                return redis.eval(source, type, keys, args);
            }
        } catch (RuntimeException e) {
            throw new RunbusException("script " + name + " failed: " + Calls.describe(e), e);
        }
    }

    /**
     * Like {@link #run}, without waiting: commands sent this way from several threads share the connection's
     * pipeline. The future completes on the client's I/O thread; keep its callbacks short.
     */
    <T> CompletableFuture<T> runAsync(RedisClusterAsyncCommands<String, byte[]> redis, ScriptOutputType type, String[] keys,
                                      byte[]... args) {
        CompletableFuture<T> bySha = redis.<T>evalsha(sha, type, keys, args).toCompletableFuture();
        return named(bySha.exceptionallyCompose(e -> cause(e) instanceof RedisNoScriptException
                ? redis.<T>eval(source, type, keys, args).toCompletableFuture()
                : CompletableFuture.failedFuture(cause(e))));
    }

    /**
     * Sends the whole script (EVAL), never its SHA: the command cannot be answered NOSCRIPT, so it needs no
     * second send from the I/O thread, and is ordered with the caller's other commands on the connection.
     * Redis still compiles the script once and finds it by its SHA afterwards. For small, periodic scripts.
     */
    <T> CompletableFuture<T> evalAsync(RedisClusterAsyncCommands<String, byte[]> redis, ScriptOutputType type,
                                       String[] keys, byte[]... args) {
        return named(redis.<T>eval(source, type, keys, args).toCompletableFuture());
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
