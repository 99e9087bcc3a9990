package dev.runbus.internal.scripts;

import static dev.runbus.internal.scripts.LuaScript.args;

import dev.runbus.internal.redis.Entry;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.Replies;
import dev.runbus.internal.redis.WireFormat;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** Typed calls of the Lua scripts; each script's KEYS and ARGV are documented in its header. */
public final class Scripts {

    /** Stream ids compared as Redis orders them: milliseconds, then sequence number. */
    private static final Comparator<String> STREAM_ORDER = Comparator
            .comparingLong((String id) -> Long.parseLong(id, 0, id.indexOf('-'), 10))
            .thenComparingLong(id -> Long.parseLong(id, id.indexOf('-') + 1, id.length(), 10));

    /**
     * A start record's field after one start at the pending list's first delivery: starts + 2^32 × that delivery
     * count (record_starts.lua, whose {@code FIRST} it is).
     */
    static final byte[] FIRST_START = Long.toString(1 + (1L << 32)).getBytes(StandardCharsets.US_ASCII);
    private static final LuaScript READ_OWN_PENDING = LuaScript.load("read_own_pending");
    private static final LuaScript RECLAIM = LuaScript.load("reclaim");
    private static final LuaScript DEAD_LETTER = LuaScript.load("dead_letter");
    private static final LuaScript REPLAY = LuaScript.load("replay");
    private static final LuaScript KEEP_ALIVE = LuaScript.load("keep_alive");
    private static final LuaScript HEARTBEAT = LuaScript.load("heartbeat");
    private static final LuaScript DELETE_CONSUMER = LuaScript.load("delete_consumer");
    private static final LuaScript DELETE_GROUP = LuaScript.load("delete_group");
    private static final LuaScript FORGET_CONSUMER = LuaScript.load("forget_consumer");
    private static final LuaScript SCHEDULE = LuaScript.load("schedule");
    private static final LuaScript MOVE_DUE = LuaScript.load("move_due");
    private static final LuaScript RETRY_LATER = LuaScript.load("retry_later");
    private static final LuaScript SCHEDULED_LIST = LuaScript.load("scheduled_list");
    private static final LuaScript SCHEDULED_CANCEL = LuaScript.load("scheduled_cancel");
    private static final LuaScript RECORD_STARTS = LuaScript.load("record_starts");
    private static final LuaScript ACK = LuaScript.load("ack");
    private static final LuaScript SWEEP_STARTS = LuaScript.load("sweep_starts");

    public record ReadResult(List<Entry> entries, List<String> trimmed, String lastId) {
    }

    public record ClaimResult(String nextCursor, List<Entry> claimed, List<String> trimmed) {
    }

    /** A replay's result: {@code status} 1 replayed, 0 replayed before, -1 no such dead letter. */
    public record ReplayResult(int status, String streamId) {
    }

    private final ScriptCalls calls;
    private final RedisClusterCommands<String, byte[]> redis;
    private final RedisClusterAsyncCommands<String, byte[]> async;
    private final Keys keys;

    /** {@code redis} and {@code async} are two faces of one connection; {@code calls} how the scripts are sent. */
    public Scripts(ScriptCalls calls, RedisClusterCommands<String, byte[]> redis,
            RedisClusterAsyncCommands<String, byte[]> async, Keys keys) {
        this.calls = calls;
        this.redis = redis;
        this.async = async;
        this.keys = keys;
    }

    /**
     * Re-reads this consumer's own pending entries of one partition, {@code partition} of {@code partitions}; ids
     * in the result are the partition's stream ids.
     */
    public ReadResult readOwnPending(Partitions partitions, int partition, String group, String consumer, String afterId,
                              int count) {
        String name = partitions.name(partition);
        List<Object> r = calls.run(READ_OWN_PENDING, redis, ScriptOutputType.MULTI,
                new String[] {keys.stream(name), keys.starts(name, group)}, args(group, consumer, afterId, count));
        return readResult(partition, consumer, r);
    }

    /** Like {@link #readOwnPending}, without waiting. */
    public CompletableFuture<ReadResult> readOwnPendingAsync(Partitions partitions, int partition, String group,
                                                             String consumer, String afterId, int count) {
        String name = partitions.name(partition);
        return calls.<List<Object>>runAsync(READ_OWN_PENDING, async, ScriptOutputType.MULTI,
                new String[] {keys.stream(name), keys.starts(name, group)}, args(group, consumer, afterId, count))
                .thenApply(r -> readResult(partition, consumer, r));
    }

    private static ReadResult readResult(int partition, String consumer, List<Object> r) {
        return new ReadResult(Replies.entries(partition, r.get(0), consumer), Replies.ids(r.get(1)),
                Replies.str(r.get(2)));
    }

    /**
     * One step of an XAUTOCLAIM scan of one partition, without waiting; ids in the result are the partition's stream
     * ids.
     */
    public CompletableFuture<ClaimResult> reclaim(Partitions partitions, int partition, String group, String consumer,
                                           long minIdleMillis, String cursor, int count) {
        String name = partitions.name(partition);
        return calls.<List<Object>>runAsync(RECLAIM, async, ScriptOutputType.MULTI,
                new String[] {keys.stream(name), keys.starts(name, group)},
                args(group, consumer, minIdleMillis, cursor, count))
                .thenApply(r -> new ClaimResult(Replies.str(r.get(0)), Replies.entries(partition, r.get(1), ""),
                        Replies.ids(r.get(2))));
    }

    /**
     * The lease a call must still hold to act on a partition of an ordered group: the lease key and its value
     * for the holder, {@code "<fencing token> <consumer>"}.
     */
    public record Fence(String leaseKey, String holder) {
    }

    /**
     * Moves one pending entry of partition {@code name} of {@code topic} to the partition's dead-letter stream,
     * without waiting. The future holds the dead letter's stream id, "trimmed" when the entry was gone, "fenced"
     * when {@code fence} (null: none) is no longer held, or null when it was not pending. {@code token} names
     * this call: sent again after a reconnect, within {@code rememberMillis}, it answers what it answered the
     * first time.
     */
    public CompletableFuture<String> deadLetter(String topic, String name, String group, String streamId, String consumer,
                                         long deliveries, String reason, long atMillis, String token,
                                         long rememberMillis, Fence fence) {
        String[] k = {keys.stream(name), keys.deadLetters(name), keys.deadLetterCall(name, token),
                keys.starts(name, group)};
        byte[][] a = args(group, streamId, topic, consumer, deliveries, reason, atMillis, rememberMillis);
        if (fence != null) {
            k = new String[] {k[0], k[1], k[2], k[3], fence.leaseKey()};
            a = args(group, streamId, topic, consumer, deliveries, reason, atMillis, rememberMillis, fence.holder());
        }
        return calls.<byte[]>runAsync(DEAD_LETTER, async, ScriptOutputType.VALUE, k, a).thenApply(Replies::str);
    }

    /**
     * Replays dead letter {@code deadLetterId} (a stream id of the dead-letter stream of partition {@code name})
     * into that same partition's stream; {@code token} names this call, so that the same call sent again is not a
     * duplicate.
     */
    public ReplayResult replay(String name, String deadLetterId, String token) {
        List<Object> r = calls.run(REPLAY, redis, ScriptOutputType.MULTI,
                new String[] {keys.deadLetters(name), keys.replayed(name), keys.stream(name)},
                args(deadLetterId, token));
        return new ReplayResult((int) Replies.num(r.get(0)), r.size() > 1 ? Replies.str(r.get(1)) : null);
    }

    /**
     * What a keep-alive round found: ids this consumer no longer owns, and ids deleted from the stream while
     * pending (acked by the script); every other id was renewed.
     */
    public record KeepAliveResult(List<String> lost, List<String> trimmed) {
    }

    /**
     * Refreshes the claims of entries this consumer still owns and that still exist, all of partition
     * {@code name}, without waiting; {@code ids} are its stream ids.
     */
    public CompletableFuture<KeepAliveResult> keepAlive(String name, String group, String consumer, List<String> ids) {
        Object[] a = new Object[ids.size() + 2];
        a[0] = group;
        a[1] = consumer;
        for (int i = 0; i < ids.size(); i++) {
            a[i + 2] = ids.get(i);
        }
        return calls.<List<Object>>runAsync(KEEP_ALIVE, async, ScriptOutputType.MULTI,
                        new String[] {keys.stream(name), keys.starts(name, group)}, args(a))
                .thenApply(r -> new KeepAliveResult(Replies.ids(r.get(0)), Replies.ids(r.get(1))));
    }

    /**
     * Records one handler start on each of {@code ids}, entries of partition {@code name} of an unordered group,
     * without waiting (record_starts.lua). Should it reach Redis after the entries' ack, the script skips ids no
     * longer pending; the consumer also sends an entry's ack behind its record.
     */
    public CompletableFuture<Long> recordStarts(String name, String group, List<String> ids) {
        List<String> ordered = inStreamOrder(ids); // the script takes the span's ends from the first and the last
        Object[] a = new Object[ordered.size() + 1];
        a[0] = group;
        for (int i = 0; i < ordered.size(); i++) {
            a[i + 1] = ordered.get(i);
        }
        return calls.runAsync(RECORD_STARTS, async, ScriptOutputType.INTEGER,
                new String[] {keys.stream(name), keys.starts(name, group)}, args(a));
    }

    /**
     * Records the first handler start on each of {@code ids}, entries of partition {@code name} of an unordered group
     * that this consumer read as new ({@code XREADGROUP ... >}), without waiting: one plain {@code HSET} of the value
     * record_starts.lua writes for a first start at a first delivery ({@link #FIRST_START}). No script is needed
     * there: the pending list counts such an entry's delivery as its first, so there is no count to read, and a call
     * the client sends again writes the same value again (the caller sends it only while no other
     * consumer can have claimed the entry, whose record would carry a later delivery). What the script's look at the pending list prevents, a
     * field written after its entry's ack removed it, the caller prevents by never sending the entry's ack ahead of
     * this call (and holding its dead letter or reschedule until this call is answered).
     */
    public CompletableFuture<Long> recordFirstStarts(String name, String group, List<String> ids) {
        Map<String, byte[]> fields = new LinkedHashMap<>(ids.size() * 2);
        for (String id : ids) {
            fields.put(id, FIRST_START);
        }
        return async.hset(keys.starts(name, group), fields).toCompletableFuture();
    }

    /** {@code ids} in stream order (milliseconds, then sequence number); as given when they are in it already. */
    static List<String> inStreamOrder(List<String> ids) {
        for (int i = 1; i < ids.size(); i++) {
            if (STREAM_ORDER.compare(ids.get(i - 1), ids.get(i)) > 0) {
                List<String> sorted = new ArrayList<>(ids);
                sorted.sort(STREAM_ORDER);
                return sorted;
            }
        }
        return ids;
    }

    /**
     * Puts record_starts.lua into the script cache of the node of each of {@code names} (partitions), by running it
     * once with no id: a start is recorded without waiting, and the NOSCRIPT answer of a first send would take one
     * more round trip, during which a process that dies loses the record. Run rather than SCRIPT LOAD, which the
     * documented ACL users do not have (docs/security.md) and which on a cluster reaches every node. With functions,
     * the same run finds a node without the library and loads it there. Sent without waiting, to every node at once: a
     * node that does not answer holds up nothing.
     */
    public CompletableFuture<Void> loadRecordStarts(List<String> names, String group) {
        List<CompletableFuture<Object>> runs = new ArrayList<>();
        for (String name : names) {
            runs.add(calls.runAsync(RECORD_STARTS, async, ScriptOutputType.INTEGER,
                    new String[] {keys.stream(name), keys.starts(name, group)}, args(group)));
        }
        return CompletableFuture.allOf(runs.toArray(new CompletableFuture<?>[0]));
    }

    /** One page of a start record's sweep: where the scan goes on ("0" when done), and how many fields it removed. */
    public record SweepPage(String cursor, long removed) {
    }

    /**
     * Removes, without waiting, the fields of partition {@code name}'s start record of {@code group} whose entries are
     * no longer pending, one page of {@code count} fields from {@code cursor} (sweep_starts.lua).
     */
    public CompletableFuture<SweepPage> sweepStarts(String name, String group, String cursor, int count) {
        return calls.<List<Object>>runAsync(SWEEP_STARTS, async, ScriptOutputType.MULTI,
                new String[] {keys.stream(name), keys.starts(name, group)}, args(group, cursor, count))
                .thenApply(r -> new SweepPage(Replies.str(r.get(0)), Replies.num(r.get(1))));
    }

    /**
     * Acks {@code ids} of partition {@code name} in an unordered group and removes their start records, without
     * waiting (ack.lua), through {@code via}, a face of this connection (the acker's own: the benchmark observes
     * acks on it); the future holds how many were acked.
     */
    public CompletableFuture<Long> ack(RedisClusterAsyncCommands<String, byte[]> via, String name, String group,
                                List<String> ids) {
        Object[] a = new Object[ids.size() + 1];
        a[0] = group;
        for (int i = 0; i < ids.size(); i++) {
            a[i + 1] = ids.get(i);
        }
        return calls.runAsync(ACK, via, ScriptOutputType.INTEGER, new String[] {keys.stream(name), keys.starts(name, group)},
                args(a));
    }

    /**
     * Ordered with the commands sent before and after it: sent whole (EVAL), even after a SCRIPT FLUSH; or an FCALL,
     * sent a second time only on a master that lost the function library.
     */
    public CompletableFuture<List<Object>> heartbeatAsync(String topic, String group, List<String> consumers) {
        return calls.runInOrder(HEARTBEAT, async, ScriptOutputType.MULTI, new String[] {keys.heartbeats(topic, group)},
                args(consumers.toArray()));
    }

    /** One consumer's heartbeat; returns the milliseconds since its previous one, -1 when it had none. */
    public long heartbeat(String topic, String group, String consumer) {
        List<Object> ages = calls.run(HEARTBEAT, redis, ScriptOutputType.MULTI, new String[] {keys.heartbeats(topic, group)},
                args(consumer));
        return Replies.num(ages.get(0));
    }

    /**
     * Deletes a dead consumer from the group of one partition's stream, {@code name} of {@code topic}, when its
     * pending list there is empty: 1 deleted, 0 alive, -1 has pending entries on that partition. The heartbeats
     * stay on the topic's key. On Redis Cluster the keys of a partition other than the topic's own are in another
     * slot than the heartbeats: this script would be cross-slot there and needs the heartbeat check split out of
     * it (a later issue).
     */
    /** Removes a dead consumer's heartbeat: 1 dead (removed, or had none), 0 alive. */
    public long forgetConsumer(String topic, String group, String consumer, long deadAfterMillis) {
        Long r = calls.run(FORGET_CONSUMER, redis, ScriptOutputType.INTEGER, new String[] {keys.heartbeats(topic, group)},
                args(consumer, deadAfterMillis));
        return r;
    }

    /** Deletes a consumer from partition {@code name}'s group: 1 deleted, -1 it has pending entries there. */
    public long deleteConsumer(String name, String group, String consumer) {
        Long r = calls.run(DELETE_CONSUMER, redis, ScriptOutputType.INTEGER, new String[] {keys.stream(name)},
                args(group, consumer));
        return r;
    }

    /**
     * Destroys {@code group} on partition {@code name}'s stream and removes its start and retry records there, in one
     * step (delete_group.lua); true when the group existed on the stream.
     */
    public boolean deleteGroup(String name, String group) {
        Long r = calls.run(DELETE_GROUP, redis, ScriptOutputType.INTEGER, new String[] {keys.stream(name),
            keys.starts(name, group), keys.started(name, group), keys.retryAt(name, group)}, args(group));
        return r == 1;
    }

    // ------------------------------------------------------------------------------------------------ delays

    /** What scheduling answered: the due time and the server's time then, epoch ms on the server's clock. */
    public record Schedule(long dueMillis, long nowMillis) {
    }

    /**
     * Schedules an entry with these fields in partition {@code name}'s delay set under {@code id}: due
     * {@code millis} from now ({@code relative}) or at {@code millis}, epoch ms, both on the server's clock.
     */
    public CompletableFuture<Schedule> schedule(String name, String id, boolean relative, long millis,
                                         Map<String, byte[]> fields) {
        byte[][] a = new byte[3 + 2 * fields.size()][];
        a[0] = WireFormat.utf8(id);
        a[1] = WireFormat.utf8(relative ? "in" : "at");
        a[2] = WireFormat.utf8(Long.toString(millis));
        int i = 3;
        for (Map.Entry<String, byte[]> f : fields.entrySet()) {
            a[i++] = WireFormat.utf8(f.getKey());
            a[i++] = f.getValue();
        }
        return calls.<List<Object>>runAsync(SCHEDULE, async, ScriptOutputType.MULTI,
                new String[] {keys.delayed(name), keys.delayedEntries(name)}, a)
                .thenApply(r -> new Schedule(Replies.num(r.get(0)), Replies.num(r.get(1))));
    }

    /**
     * What one mover call did: entries moved, ms until the next is due (0 now, -1 none left), and entries set aside
     * as dead letters because they could not be appended.
     */
    /**
     * What {@code move_due.lua} did: entries moved, when the next is due, and the entries it set aside as dead letters
     * of the partition instead (their dead-letter ids and fields as written).
     */
    public record Moved(long moved, long nextDueInMillis, List<SetAside> deadLetters) {

        public long setAside() {
            return deadLetters.size();
        }
    }

    /** A scheduled entry set aside as a dead letter: its id in the partition's dead-letter stream, and its fields. */
    public record SetAside(String deadLetterId, Map<String, byte[]> fields) {
    }

    /** Moves up to {@code count} due entries of partition {@code name} of {@code topic} into its stream. */
    public CompletableFuture<Moved> moveDue(String topic, String name, int count) {
        return calls.<List<Object>>runAsync(MOVE_DUE, async, ScriptOutputType.MULTI,
                new String[] {keys.delayed(name), keys.delayedEntries(name), keys.stream(name),
                        keys.deadLetters(name)}, args(count, topic))
                .thenApply(r -> {
                    List<?> dead = (List<?>) r.get(3);
                    List<SetAside> aside = new ArrayList<>(dead.size() / 2);
                    for (int i = 0; i + 1 < dead.size(); i += 2) {
                        aside.add(new SetAside(Replies.str(dead.get(i)), pairs((List<?>) dead.get(i + 1))));
                    }
                    return new Moved(Replies.num(r.get(0)), Replies.num(r.get(1)), List.copyOf(aside));
                });
    }

    /** A flat list of field, value as a map; values are bytes. */
    private static Map<String, byte[]> pairs(List<?> flat) {
        Map<String, byte[]> fields = new LinkedHashMap<>();
        for (int i = 0; i + 1 < flat.size(); i += 2) {
            fields.put(Replies.str(flat.get(i)), (byte[]) flat.get(i + 1));
        }
        return fields;
    }

    /**
     * Acks a failed entry of partition {@code name} pending under {@code consumer} and schedules its copy, for
     * {@code group} only, with {@code attempts} made, due {@code delayMillis} from now (server clock), under
     * {@code copyId}. The future holds the due time (epoch ms, as text), "trimmed", "fenced" (when {@code fence},
     * null for none, is no longer held), or null when the entry was not pending under that consumer.
     */
    public CompletableFuture<String> retryLater(String name, String group, String consumer, String streamId,
                                         long delayMillis, long attempts, String copyId, Fence fence) {
        String[] k = {keys.stream(name), keys.delayed(name), keys.delayedEntries(name), keys.starts(name, group)};
        byte[][] a = args(group, streamId, delayMillis, attempts, copyId, consumer);
        if (fence != null) {
            k = new String[] {k[0], k[1], k[2], k[3], fence.leaseKey()};
            a = args(group, streamId, delayMillis, attempts, copyId, consumer, fence.holder());
        }
        return calls.<byte[]>runAsync(RETRY_LATER, async, ScriptOutputType.VALUE, k, a).thenApply(Replies::str);
    }

    /**
     * One scheduled entry as the list script returns it; {@code unreadable} is null, or why its fields could not be
     * read (written by another program), and then {@code fields} is empty.
     */
    public record ScheduledRow(String id, long dueMillis, Map<String, byte[]> fields, String unreadable) {
    }

    /** The soonest {@code limit} scheduled entries of partition {@code name}. */
    public List<ScheduledRow> scheduled(String name, int limit) {
        List<Object> rows = calls.run(SCHEDULED_LIST, redis, ScriptOutputType.MULTI,
                new String[] {keys.delayed(name), keys.delayedEntries(name)}, args(limit));
        List<ScheduledRow> out = new ArrayList<>(rows.size());
        for (Object row : rows) {
            List<?> r = (List<?>) row;
            out.add(new ScheduledRow(Replies.str(r.get(0)), (long) Double.parseDouble(Replies.str(r.get(1))),
                    pairs((List<?>) r.get(2)), r.size() > 3 ? Replies.str(r.get(3)) : null));
        }
        return out;
    }

    /** Cancels scheduled entry {@code id} of partition {@code name}: true when it was scheduled. */
    public boolean cancelScheduled(String name, String id) {
        Long r = calls.run(SCHEDULED_CANCEL, redis, ScriptOutputType.INTEGER,
                new String[] {keys.delayed(name), keys.delayedEntries(name)}, args(id));
        return r == 1L;
    }
}
