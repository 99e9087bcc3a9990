package dev.runbus.internal;

import static dev.runbus.internal.LuaScript.args;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.RedisFuture;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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

    /**
     * Like {@link #members(String, long)}, awaited {@code waitMillis} at most: a tick does not wait out the command
     * timeout when the master of the topic's slot stalls (its leases are renewed at the next tick all the same).
     */
    List<String> members(String topic, long leaseMillis, long waitMillis) {
        return Calls.await("renewing the membership in " + topic, MEMBERS.<List<Object>>runAsync(async,
                ScriptOutputType.MULTI, new String[] {keys.members(topic, group)}, args(consumer, leaseMillis))
                .thenApply(Replies::ids), waitMillis);
    }

    /**
     * The consumer holding each partition's lease, by partition number; partitions without one are absent. The
     * lookups are sent at once and awaited {@code waitMillis} in all: a partition whose master does not answer by
     * then, or fails, keeps its owner in {@code lastKnown}, so that a stalled master neither holds up the caller nor
     * makes its partitions look free (DESIGN.md rule 14).
     */
    Map<Integer, String> owners(Partitions partitions, long waitMillis, Map<Integer, String> lastKnown) {
        List<RedisFuture<byte[]>> sent = new ArrayList<>(partitions.count());
        for (int p = 0; p < partitions.count(); p++) {
            sent.add(async.get(keys.lease(partitions.name(p), group)));
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        Map<Integer, String> owners = new HashMap<>();
        for (int p = 0; p < partitions.count(); p++) {
            String owner;
            try {
                byte[] holder = sent.get(p).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                LeaseValue lease = LeaseValue.parse(holder == null ? null : Replies.str(holder));
                owner = lease == null ? null : lease.consumer();
            } catch (TimeoutException | ExecutionException e) {
                sent.get(p).cancel(true);
                owner = lastKnown.get(p);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                owner = lastKnown.get(p);
            }
            if (owner != null) {
                owners.put(p, owner);
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

    /** Like {@link #renew}, without waiting. */
    CompletableFuture<Boolean> renewAsync(String name, String holder, long leaseMillis) {
        return RENEW.<Long>runAsync(async, ScriptOutputType.INTEGER, new String[] {keys.lease(name, group)},
                args(holder, leaseMillis)).thenApply(r -> r == 1);
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
