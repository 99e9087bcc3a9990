package dev.runbus.internal.registry;

import dev.runbus.RunbusException;
import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.Replies;
import dev.runbus.internal.redis.WireFormat;
import dev.runbus.internal.scripts.LuaScript;
import dev.runbus.internal.scripts.ScriptCalls;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToIntFunction;

/**
 * The topics this key prefix knows: the set of their names, so that the inspector can list streams without
 * scanning the keyspace, and the partition count each one has recorded. Each process registers a topic once,
 * on its first publish or subscribe, and checks then that its configured partition count is the recorded one.
 */
public final class TopicRegistry {

    private static final LuaScript PARTITION_COUNT = LuaScript.load("partition_count");

    private final ScriptCalls calls;
    private final RedisClusterCommands<String, byte[]> redis;
    private final Keys keys;
    private final ToIntFunction<String> configured;
    private final Map<String, Partitions> known = new ConcurrentHashMap<>();
    /**
     * Counts read back from Redis by {@link #recorded}. A recorded count never changes, so it is read once; a
     * topic without a record is not kept (it may get one). Apart from {@link #known}: finding a count recorded
     * must not spare this bus the check of its own configuration.
     */
    private final Map<String, Partitions> seen = new ConcurrentHashMap<>();

    /** {@code configured} gives the partition count this bus is configured with for a topic. */
    public TopicRegistry(ScriptCalls calls, RedisClusterCommands<String, byte[]> redis, Keys keys,
                  ToIntFunction<String> configured) {
        this.calls = calls;
        this.redis = redis;
        this.keys = keys;
        this.configured = configured;
    }

    /**
     * Registers the topic with the partition count this bus is configured with, recording it if it is the first
     * to; returns its partitions.
     *
     * @throws RunbusException if the topic has recorded another count (keys would hash onto other partitions)
     */
    public Partitions register(String topic) {
        Partitions p = known.get(topic);
        if (p != null) {
            return p;
        }
        int configured = this.configured.applyAsInt(topic);
        byte[] reply = calls.run(PARTITION_COUNT, redis, ScriptOutputType.VALUE,
                new String[] {keys.partitionCount(topic), keys.stream(topic)}, LuaScript.args(configured));
        int recorded = Integer.parseInt(Replies.str(reply));
        if (recorded != configured) {
            throw new RunbusException("topic " + topic + " has " + recorded + " partition" + (recorded == 1 ? "" : "s")
                    + " (recorded in Redis at " + keys.partitionCount(topic) + "), but this bus is configured with "
                    + configured + ": configure " + recorded + " for it (BusConfig partitions, or --partitions), or use "
                    + "a new topic. A topic's partition count cannot change: its keys would hash onto other partitions "
                    + "and per-key order would break");
        }
        Calls.call("registering topic " + topic, () -> redis.sadd(keys.topics(), WireFormat.utf8(topic)));
        p = new Partitions(topic, configured);
        known.put(topic, p);
        return p;
    }

    /**
     * The partitions of a topic as recorded in Redis, for tools that read a topic without being configured for
     * it (inspector, dead letters); a topic without a record has one.
     */
    public Partitions recorded(String topic) {
        Partitions p = known.get(topic);
        if (p == null) {
            p = seen.get(topic);
        }
        if (p != null) {
            return p;
        }
        byte[] count = Calls.call("reading the partition count of " + topic,
                () -> redis.get(keys.partitionCount(topic)));
        int n = 1;
        if (count != null) {
            try {
                n = Integer.parseInt(Replies.str(count));
            } catch (NumberFormatException e) {
                throw new RunbusException("the partition count of topic " + topic + " at " + keys.partitionCount(topic)
                        + " is not a number: '" + Replies.str(count) + "'");
            }
        }
        p = new Partitions(topic, n);
        if (count != null) {
            seen.put(topic, p);
        }
        return p;
    }

    public List<String> all() {
        List<String> names = new ArrayList<>();
        for (byte[] b : Calls.call("listing topics", () -> redis.smembers(keys.topics()))) {
            names.add(Replies.str(b));
        }
        names.sort(null);
        return names;
    }
}
