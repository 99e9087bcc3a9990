package dev.runbus.testkit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * A seeded plan of faults on the Redis side, and the thread that applies it: {@code CLIENT PAUSE}, a wire that
 * holds everything ({@link TcpProxy#pause}), replies lost and then the connections dropped (the client re-sends
 * what had no answer, so it runs twice), {@code SCRIPT FLUSH} (and {@code FUNCTION FLUSH} from Redis 7 on), and, where asked, a {@code DEBUG SLEEP} of the
 * whole server at the end. Shared by the bus's and the runs layer's fault properties, so that a seed means the
 * same faults in both.
 */
public final class RedisFaultPlan {

    /** One fault, applied at {@code atMillis} after the start, for {@code millis}. */
    public record Fault(String kind, long atMillis, long millis) {
    }

    private RedisFaultPlan() {
    }

    /** Three or four faults of the first four kinds, half a second to 1.5 s apart; then a server sleep if asked. */
    public static List<Fault> plan(SplittableRandom random, boolean debugSleep) {
        String[] kinds = {"pause", "wire-held", "replies-lost", "script-flush"};
        List<Fault> faults = new ArrayList<>();
        long at = 500 + random.nextInt(500);
        for (int i = 0; i < 3 + random.nextInt(2); i++) {
            String kind = kinds[random.nextInt(kinds.length)];
            long millis = kind.equals("script-flush") ? 0 : 300 + random.nextInt(2200);
            faults.add(new Fault(kind, at, millis));
            at += millis + 500 + random.nextInt(1000);
        }
        if (debugSleep) {
            // Last, so that each seed's drawn faults stay what they were: the server itself sleeps.
            faults.add(new Fault("debug-sleep", at, 300 + random.nextInt(1500)));
        }
        return faults;
    }

    /** When the last fault of the plan ends, in milliseconds from its start. */
    public static long span(List<Fault> faults) {
        Fault last = faults.get(faults.size() - 1);
        return last.atMillis() + last.millis();
    }

    /**
     * Applies the plan on the calling thread, on its schedule: the server through a connection of its own from
     * {@code direct}, the wire through {@code proxy}. Returns when the last fault ended (or on an interrupt).
     */
    public static void apply(List<Fault> faults, TcpProxy proxy, RedisClient direct) {
        long start = System.nanoTime();
        try (StatefulRedisConnection<String, String> own = direct.connect()) {
            for (Fault f : faults) {
                long wait = f.atMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                if (wait > 0) {
                    Thread.sleep(wait); // the plan's schedule
                }
                switch (f.kind()) {
                    case "pause" -> {
                        own.sync().clientPause(f.millis());
                        Thread.sleep(f.millis());
                    }
                    case "wire-held" -> {
                        proxy.pause();
                        Thread.sleep(f.millis());
                        proxy.resume();
                    }
                    case "replies-lost" -> {
                        proxy.swallowReplies(true);
                        Thread.sleep(f.millis());
                        proxy.dropConnections();
                        proxy.swallowReplies(false);
                    }
                    case "script-flush" -> flushScripts(own);
                    case "debug-sleep" -> debugSleep(own, f.millis());
                    default -> throw new IllegalStateException(f.kind());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Empties the script cache and, on a server with functions, the function library: what a restart without
     * persistence or a failover to a node without them leaves. (A bus calls its scripts as functions from Redis 7
     * on, so the cache alone would no longer reach it.)
     */
    public static void flushScripts(StatefulRedisConnection<String, String> own) {
        own.sync().scriptFlush();
        if (!own.sync().info("server").contains("redis_version:6.")) {
            own.sync().functionFlush(io.lettuce.core.FlushMode.SYNC);
        }
    }

    /** Whether the server runs DEBUG (Redis 7 refuses it unless started with --enable-debug-command yes). */
    public static boolean acceptsDebugSleep(StatefulRedisConnection<String, String> c) {
        try {
            debugSleep(c, 0);
            return true;
        } catch (RuntimeException refused) {
            return false;
        }
    }

    /** DEBUG SLEEP, which the client library no longer offers as a method: the server blocks for that long. */
    private static void debugSleep(StatefulRedisConnection<String, String> c, long millis) {
        c.sync().dispatch(CommandType.DEBUG, new StatusOutput<>(StringCodec.UTF8),
                new CommandArgs<>(StringCodec.UTF8).add("SLEEP").add(String.valueOf(millis / 1000.0)));
    }
}
