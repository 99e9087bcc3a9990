package dev.runbus.internal;

import static dev.runbus.internal.LuaScript.args;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Typed calls of the scripts of ordered groups: membership, partition leases with fencing tokens, and the
 * fenced ack and claim. Each script's KEYS and ARGV are documented in its header. {@code name} is a partition's
 * name ({@link Partitions#name}); a lease's {@code holder} is its value for the consumer that took it.
 */
final class OrderedScripts {

    private static final LuaScript MEMBERS = LuaScript.load("group_members");
    private static final LuaScript ACQUIRE = LuaScript.load("lease_acquire");
    private static final LuaScript RENEW = LuaScript.load("lease_renew");
    private static final LuaScript ACK = LuaScript.load("ordered_ack");
    private static final LuaScript CLAIM = LuaScript.load("ordered_claim");
    private static final LuaScript READ = LuaScript.load("ordered_read");

    /** New entries read; when there were none, the stream's last id to wait from. */
    record Read(List<Entry> entries, String lastId) {
    }

    /** What a claim found; null {@code lastId} when there was nothing more pending. */
    record Claimed(List<Entry> entries, List<String> trimmed, String lastId) {
    }

    /** Returned by the fenced calls when the caller no longer holds the lease. */
    static final class Fenced extends Exception {
        Fenced(String name) {
            super("the lease of partition " + name + " is held by another consumer");
        }
    }

    private final RedisClusterCommands<String, byte[]> redis;
    private final RedisClusterAsyncCommands<String, byte[]> async;
    private final Keys keys;
    private final String group;
    private final String consumer;

    /** {@code redis} and {@code async} are two faces of one connection, so that calls keep their order. */
    OrderedScripts(RedisClusterCommands<String, byte[]> redis, RedisClusterAsyncCommands<String, byte[]> async, Keys keys,
                   String group, String consumer) {
        this.redis = redis;
        this.async = async;
        this.keys = keys;
        this.group = group;
        this.consumer = consumer;
    }

    /** Renews this consumer's membership ({@code leaseMillis} 0: leaves) and returns the live members. */
    List<String> members(String topic, long leaseMillis) {
        return Replies.ids(MEMBERS.run(redis, ScriptOutputType.MULTI, new String[] {keys.members(topic, group)},
                args(consumer, leaseMillis)));
    }

    /** The consumer holding each partition's lease, by partition number; partitions without one are absent. */
    Map<Integer, String> owners(Partitions partitions) {
        Map<Integer, String> owners = new HashMap<>();
        for (int p = 0; p < partitions.count(); p++) {
            LeaseValue lease = LeaseValue.parse(holder(partitions.name(p)));
            if (lease != null && lease.consumer() != null) {
                owners.put(p, lease.consumer());
            }
        }
        return owners;
    }

    /** The value of a partition's lease, or null when nobody holds it. */
    String holder(String name) {
        byte[] holder = redis.get(keys.lease(name, group));
        return holder == null ? null : Replies.str(holder);
    }

    /** Takes the lease; returns its value, or null when another consumer holds it. */
    String acquire(String name, long leaseMillis) {
        byte[] holder = ACQUIRE.run(redis, ScriptOutputType.VALUE,
                new String[] {keys.lease(name, group), keys.fence(name, group)}, args(consumer, leaseMillis));
        return holder == null ? null : Replies.str(holder);
    }

    /** Renews the lease ({@code leaseMillis} 0: releases it); false when the caller no longer holds it. */
    boolean renew(String name, String holder, long leaseMillis) {
        Long r = RENEW.run(redis, ScriptOutputType.INTEGER, new String[] {keys.lease(name, group)},
                args(holder, leaseMillis));
        return r == 1;
    }

    /** Acks one entry for the lease holder, without waiting: the reply is 0 or 1 acked, or -1 when fenced off. */
    CompletableFuture<Long> ack(String name, String holder, String streamId) {
        return ACK.runAsync(async, ScriptOutputType.INTEGER,
                new String[] {keys.stream(name), keys.lease(name, group)}, args(group, holder, streamId));
    }

    /** Reads up to {@code count} new entries of partition {@code partition} (named {@code name}) for the lease holder. */
    Read read(int partition, String name, String holder, int count) throws Fenced {
        List<Object> r = READ.run(redis, ScriptOutputType.MULTI,
                new String[] {keys.stream(name), keys.lease(name, group)}, args(group, consumer, holder, count));
        if (r.size() == 1) {
            throw new Fenced(name);
        }
        return new Read(Replies.entries(partition, r.get(0), ""), Replies.str(r.get(1)));
    }

    /**
     * Claims, in id order, up to {@code count} pending entries from {@code fromId} to {@code toId} (inclusive;
     * "-" and "+" for the ends), skipping {@code skipId} ("" for none); the first {@code counted} of them count a
     * delivery, the others keep their delivery count (ordered_claim.lua says why).
     */
    Claimed claim(int partition, String name, String holder, String fromId, String toId, String skipId, int count,
                  int counted) throws Fenced {
        List<Object> r = CLAIM.run(redis, ScriptOutputType.MULTI,
                new String[] {keys.stream(name), keys.lease(name, group)},
                args(group, consumer, holder, fromId, skipId, count, toId, counted));
        if (r.size() == 1) {
            throw new Fenced(name);
        }
        return new Claimed(Replies.entries(partition, r.get(0), ""), Replies.ids(r.get(1)), Replies.str(r.get(2)));
    }
}
