package dev.runbus.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.testkit.RedisTarget;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The buses of a flow-control test on one topic, under a key prefix of their own: each {@link #bus} is connected to
 * the deployment's Redis, and {@link #close} closes them all and deletes the keys under the prefix.
 */
public final class FlowBuses implements AutoCloseable {

    private final String topic;
    private final Supplier<RedisTarget> target;
    private final String prefix = "test-flow-" + UUID.randomUUID();
    private final List<Bus> buses = new ArrayList<>();

    /** For {@code topic}, on the Redis {@code target} gives (asked when first used: a test's deployment is set late). */
    public FlowBuses(String topic, Supplier<RedisTarget> target) {
        this.topic = topic;
        this.target = target;
    }

    /** A new bus whose topic has {@code partitions} partitions. */
    public Bus bus(int partitions) {
        Bus bus = Bus.connect(BusConfig.builder(target.get().uri()).keyPrefix(prefix).partitions(topic, partitions)
                .build());
        buses.add(bus);
        return bus;
    }

    /** The first bus connected. */
    public Bus first() {
        return buses.get(0);
    }

    /** The key prefix of the buses. */
    public String prefix() {
        return prefix;
    }

    /** The Redis key of the topic's flow structure {@code structure} ({@code holds}, {@code queue}...), unpartitioned. */
    public String key(String structure) {
        return prefix + ":{" + topic + "}:flow:" + structure;
    }

    /** Members of a flow structure ({@code holds}, {@code queue}...) over every partition of the topic. */
    public long members(String structure, int partitions) {
        long n = 0;
        for (String name : new Partitions(topic, partitions).names()) {
            n += target.get().redis().zcard(prefix + ":{" + name + "}:flow:" + structure);
        }
        return n;
    }

    /** The Redis clock now, ms: the clock the flow scripts keep rates and stream ids on. */
    public long redisMillis() {
        java.util.List<String> time = target.get().redis().time();
        return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
    }

    @Override
    public void close() {
        buses.forEach(Bus::close);
        target.get().deleteKeys(prefix);
    }
}
