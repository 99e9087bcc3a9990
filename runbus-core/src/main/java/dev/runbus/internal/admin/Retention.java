package dev.runbus.internal.admin;

import dev.runbus.RunbusException;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.Replies;
import dev.runbus.internal.scripts.LuaScript;
import dev.runbus.internal.scripts.ScriptCalls;
import dev.runbus.internal.telemetry.SafeListener;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Safe retention: trims each partition stream of the topics this bus subscribes to down to the oldest entry one
 * of its groups still needs, keeping entries younger than the retention age and the newest {@code retentionKeepLast} ({@code retention.lua} decides and
 * trims in one step; on Redis 8.2 and later, without a newest n to keep, when an entry still pending holds the stream
 * back, it also trims what every group acknowledged behind that entry with {@code XTRIM … ACKED}), and, when opted in, dead letters older than their age ({@code trim_by_age.lua}). Each
 * round is idempotent, so every bus of a deployment may run it at once. A partition that fails is reported and
 * the round goes on with the next: one bad stream must not stop the others from being trimmed.
 */
public final class Retention {

    public static final String LOOP = "runbus-retention";

    private static final Logger log = LoggerFactory.getLogger(Retention.class);
    private static final LuaScript RETAIN = LuaScript.load("retention");
    private static final LuaScript TRIM_BY_AGE = LuaScript.load("trim_by_age");

    /**
     * What {@code retention.lua} found on one partition's stream.
     *
     * @param trimmed  entries trimmed now (0 when only computed)
     * @param trimTo   the id the stream was trimmed to (older entries are gone); null when nothing may be trimmed
     * @param heldBy   the group with the oldest bound; null without groups
     * @param neededFrom the oldest id some group still needs (that group's bound); null without groups
     */
    record Result(long trimmed, String trimTo, String heldBy, String neededFrom) {
    }

    private final ScriptCalls calls;
    private final RedisClusterCommands<String, byte[]> redis;
    private final Keys keys;
    private final long ageMillis;
    private final int keepLast;
    private final Duration deadLetterAge;
    private final SafeListener listener;
    /** Whether the server has XTRIM … ACKED (Redis 8.2): the script trims behind a stuck entry with it. */
    private final boolean ackedTrim;

    /**
     * {@code deadLetterAge} null: dead letters are kept. {@code ackedTrim}: the server said at connect that it has
     * {@code XTRIM … ACKED}; one that refuses it later gets the script's group scan.
     */
    public Retention(ScriptCalls calls, RedisClusterCommands<String, byte[]> redis, Keys keys, Duration age, int keepLast,
              Duration deadLetterAge, SafeListener listener, boolean ackedTrim) {
        this.ackedTrim = ackedTrim;
        this.calls = calls;
        this.redis = redis;
        this.keepLast = keepLast;
        this.keys = keys;
        this.ageMillis = age.toMillis();
        this.deadLetterAge = deadLetterAge;
        this.listener = listener;
    }

    /** One round over {@code topics} (their streams, when {@code streams}, and dead letters when opted in). */
    public void round(Collection<Partitions> topics, boolean streams) {
        for (Partitions topic : topics) {
            if (streams) {
                long n = each(topic, "trimming", name -> retain(name, ageMillis, keepLast, true).trimmed());
                if (n > 0) {
                    listener.onRetentionTrimmed(topic.topic(), n);
                }
            }
            if (deadLetterAge != null) {
                long n = each(topic, "trimming dead letters of", name -> trimByAge(keys.deadLetters(name)));
                if (n > 0) {
                    listener.onDeadLettersTrimmed(topic.topic(), n);
                }
            }
        }
    }

    /** What retention would do on partition {@code name} with no retention age: for the inspector, trims nothing. */
    Result peek(String name) {
        return retain(name, 0, 0, false);
    }

    /** Runs {@code step} on each partition; one that fails is reported and skipped. Returns the sum. */
    private long each(Partitions topic, String what, ToLongFunction<String> step) {
        long sum = 0;
        for (String name : topic.names()) {
            try {
                sum += step.applyAsLong(name);
            } catch (RuntimeException e) {
                log.warn("retention: {} {} failed; the other partitions go on", what, name, e);
                listener.onLoopError(LOOP, new RunbusException("retention: " + what + " " + name + " failed: "
                        + e.getMessage(), e));
            }
        }
        return sum;
    }

    private Result retain(String name, long age, int keep, boolean trim) {
        List<Object> r = calls.run(RETAIN, redis, ScriptOutputType.MULTI, new String[] {keys.stream(name)},
                LuaScript.args(age, trim ? "trim" : "peek", keep, ackedTrim ? "acked" : "scan"));
        return new Result(Replies.num(r.get(0)), blankAsNull(r.get(1)), blankAsNull(r.get(2)), blankAsNull(r.get(3)));
    }

    private long trimByAge(String key) {
        Long n = calls.run(TRIM_BY_AGE, redis, ScriptOutputType.INTEGER, new String[] {key},
                LuaScript.args(deadLetterAge.toMillis()));
        return n;
    }

    private static String blankAsNull(Object o) {
        String s = Replies.str(o);
        return s == null || s.isEmpty() ? null : s;
    }
}
