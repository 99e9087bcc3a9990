package dev.runbus.internal.ordered;

import static dev.runbus.internal.scripts.LuaScript.args;

import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.Entry;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.Replies;
import dev.runbus.internal.scripts.LuaScript;
import dev.runbus.internal.scripts.ScriptCalls;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
    private static final LuaScript START = LuaScript.load("ordered_start");
    private static final LuaScript RETRY_AT = LuaScript.load("ordered_retry_at");

    /** New entries read; when there were none, the stream's last id to wait from. */
    record Read(List<Entry> entries, String lastId) {
    }

    /**
     * What a claim found; null {@code lastId} when there was nothing more pending. {@code waitMillis} above 0: the
     * head entry still waits that long for its retry, and nothing was claimed.
     */
    record Claimed(List<Entry> entries, List<String> trimmed, String lastId, long waitMillis) {

        static Claimed waiting(long millis) {
            return new Claimed(List.of(), List.of(), null, millis);
        }

        boolean mustWait() {
            return waitMillis > 0;
        }
    }

    /** Returned by the fenced calls when the caller no longer holds the lease. */
    static final class Fenced extends Exception {
        Fenced(String name) {
            super("the lease of partition " + name + " is held by another consumer");
        }
    }

    private final ScriptCalls calls;
    private final RedisClusterCommands<String, byte[]> redis;
    private final RedisClusterAsyncCommands<String, byte[]> async;
    private final Keys keys;
    private final String group;
    private final String consumer;

    /** {@code redis} and {@code async} are two faces of one connection, so that calls keep their order. */
    OrderedScripts(ScriptCalls calls, RedisClusterCommands<String, byte[]> redis,
                   RedisClusterAsyncCommands<String, byte[]> async, Keys keys, String group, String consumer) {
        this.calls = calls;
        this.redis = redis;
        this.async = async;
        this.keys = keys;
        this.group = group;
        this.consumer = consumer;
    }

    /** The live members of an ordered group; {@code stale} of them stopped renewing their membership. */
    record Members(List<String> live, Set<String> stale) {
    }

    /**
     * Renews this consumer's membership ({@code leaseMillis} 0: leaves) and returns the live members, awaited
     * {@code waitMillis} at most: a tick does not wait out the command timeout when the master of the topic's slot
     * stalls (its leases are renewed at the next tick all the same). A member whose membership ends sooner than
     * {@code leaseMillis - staleAfterMillis} from now (by the Redis clock) has not renewed for that long: it is
     * stale.
     */
    Members members(String topic, long leaseMillis, long staleAfterMillis, long waitMillis) {
        List<Object> r = Calls.await("renewing the membership in " + topic, calls.<List<Object>>runAsync(MEMBERS, async,
                ScriptOutputType.MULTI, new String[] {keys.members(topic, group)}, args(consumer, leaseMillis)),
                waitMillis);
        long now = Replies.num(r.get(0));
        List<String> live = new ArrayList<>();
        Set<String> stale = new HashSet<>();
        for (int i = 1; i + 1 < r.size(); i += 2) {
            String member = Replies.str(r.get(i));
            live.add(member);
            if ((long) Double.parseDouble(Replies.str(r.get(i + 1))) - now < leaseMillis - staleAfterMillis) {
                stale.add(member);
            }
        }
        return new Members(live, stale);
    }

    /**
     * The consumer holding each partition's lease, by partition number; partitions without one are absent. The
     * lookups are sent at once and awaited {@code waitMillis} in all: a partition whose master does not answer by
     * then, or fails, keeps its owner in {@code lastKnown}, so that a stalled master neither holds up the caller nor
     * makes its partitions look free (docs/architecture.md, rule 14).
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

    /**
     * Takes the lease without waiting: its value, or null when another consumer (or another acquisition of this
     * one) holds it. {@code acquisition} names this try; a call that finds the lease taken by the same acquisition,
     * an earlier call of it having run with its reply lost, answers that lease as taken, renewed (lease_acquire.lua).
     */
    CompletableFuture<String> acquire(String name, long leaseMillis, String acquisition) {
        return calls.<byte[]>runAsync(ACQUIRE, async, ScriptOutputType.VALUE,
                new String[] {keys.lease(name, group), keys.fence(name, group)},
                args(consumer, leaseMillis, acquisition))
                .thenApply(holder -> holder == null ? null : Replies.str(holder));
    }

    /** Renews the lease ({@code leaseMillis} 0: releases it), without waiting: false when the caller lost it. */
    CompletableFuture<Boolean> renew(String name, String holder, long leaseMillis) {
        return calls.<Long>runAsync(RENEW, async, ScriptOutputType.INTEGER, new String[] {keys.lease(name, group)},
                args(holder, leaseMillis)).thenApply(r -> r == 1);
    }

    /** Acks one entry for the lease holder, without waiting: the reply is 0 or 1 acked, or -1 when fenced off. */
    CompletableFuture<Long> ack(String name, String holder, String streamId) {
        return calls.runAsync(ACK, async, ScriptOutputType.INTEGER,
                new String[] {keys.stream(name), keys.lease(name, group)}, args(group, holder, streamId));
    }

    /**
     * Reads up to {@code count} new entries of a partition (named {@code name}) for the lease holder, without
     * waiting: the raw reply, for {@link #readReply}. Entries pending under this consumer after {@code knownId} ("-"
     * for none), whose read reply was lost, come back first (ordered_read.lua).
     */
    CompletableFuture<List<Object>> readAsync(String name, String holder, int count, String knownId) {
        return calls.runAsync(READ, async, ScriptOutputType.MULTI, new String[] {keys.stream(name), keys.lease(name, group)},
                args(group, consumer, holder, count, knownId));
    }

    /** What a read of partition {@code partition} (named {@code name}) answered. */
    Read readReply(int partition, String name, List<Object> r) throws Fenced {
        if (r.size() == 1) {
            throw new Fenced(name);
        }
        List<Entry> read = new ArrayList<>();
        for (Entry e : Replies.entries(partition, r.get(0), "")) { // read, not claimed: see PartitionStep.recordStart
            read.add(new Entry(e.partition(), e.streamId(), e.fields(), e.deliveries(), e.previousOwner(), true));
        }
        return new Read(read, Replies.str(r.get(1)));
    }

    /**
     * Claims, in id order, up to {@code count} pending entries from {@code fromId} to {@code toId} (inclusive;
     * "-" and "+" for the ends), skipping {@code skipId} ("" for none). Entries whose handler started since they
     * were last counted count a delivery, the others keep their count (ordered_claim.lua says why). When
     * {@code head} is set and the first entry is waiting for its retry, nothing is claimed:
     * {@link Claimed#mustWait}.
     */
    Claimed claim(int partition, String name, String holder, String fromId, String toId, String skipId, int count,
                  boolean head) throws Fenced {
        List<Object> r = calls.run(CLAIM, redis, ScriptOutputType.MULTI,
                new String[] {keys.stream(name), keys.lease(name, group), keys.started(name, group),
                        keys.retryAt(name, group)},
                args(group, consumer, holder, fromId, skipId, count, toId, head ? 1 : 0));
        if (r.size() == 1) {
            throw new Fenced(name);
        }
        if (r.size() == 2) {
            return Claimed.waiting(Math.max(1, Replies.num(r.get(1))));
        }
        return new Claimed(Replies.entries(partition, r.get(0), ""), Replies.ids(r.get(1)), Replies.str(r.get(2)), 0);
    }

    /**
     * Records, before a handler starts on {@code streamId}, that it starts (ordered_start.lua), without waiting:
     * the reply is 1, or -1 when fenced off. Sent on the connection of the claims, so a later claim sees it.
     */
    CompletableFuture<Long> started(String name, String holder, String streamId) {
        return calls.runAsync(START, async, ScriptOutputType.INTEGER,
                new String[] {keys.lease(name, group), keys.started(name, group)}, args(holder, streamId));
    }

    /** Records that the head entry waits {@code delayMillis} for its retry, on the Redis clock; false when fenced off. */
    boolean retryAt(String name, String holder, String streamId, long delayMillis) {
        Long r = calls.run(RETRY_AT, redis, ScriptOutputType.INTEGER,
                new String[] {keys.lease(name, group), keys.retryAt(name, group)},
                args(holder, streamId, Math.max(1, delayMillis)));
        return r == 1;
    }

    /** {@link #retryAt} without waiting: the reply is 1, or -1 when fenced off. */
    CompletableFuture<Long> retryAtAsync(String name, String holder, String streamId, long delayMillis) {
        return calls.runAsync(RETRY_AT, async, ScriptOutputType.INTEGER,
                new String[] {keys.lease(name, group), keys.retryAt(name, group)},
                args(holder, streamId, Math.max(1, delayMillis)));
    }
}
