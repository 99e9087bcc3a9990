package dev.runbus.internal.deadletter;

import dev.runbus.DeadLetter;
import dev.runbus.DeadLetterAlreadyReplayedException;
import dev.runbus.DeadLetters;
import dev.runbus.NoSuchDeadLetterException;
import dev.runbus.RunbusException;
import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.Replies;
import dev.runbus.internal.registry.TopicRegistry;
import dev.runbus.internal.scripts.Scripts;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Reads and manages the dead-letter streams; the layout of a dead letter is in docs/wire-format.md.
 *
 * <p>Each partition of a topic has its own dead-letter stream. The dead letters of a partitioned topic are named
 * {@code <dead-letter stream id>@<partition>} (and their original stream ids are qualified the same way, as
 * {@link Partitions#qualify} does); a listing merges the partitions by stream id, then partition
 * ({@link Partitions#ORDER}). The partition count is the one recorded in Redis: tools reading dead letters are
 * often not configured for the topic.
 */
public final class RedisDeadLetters implements DeadLetters {

    private final RedisClusterCommands<String, byte[]> redis;
    private final Scripts scripts;
    private final Keys keys;
    private final TopicRegistry topics;
    private final java.util.function.Consumer<String> afterRemoval;

    /** @param afterRemoval told the topic after a purge (the dead-letter alarm may clear its key) */
    public RedisDeadLetters(RedisClusterCommands<String, byte[]> redis, Scripts scripts, Keys keys, TopicRegistry topics,
                     java.util.function.Consumer<String> afterRemoval) {
        this.redis = redis;
        this.scripts = scripts;
        this.keys = keys;
        this.topics = topics;
        this.afterRemoval = afterRemoval;
    }

    /** A dead-letter entry read from one partition. */
    private record Raw(Partitions.Id id, StreamMessage<String, byte[]> message) {
    }

    /** The largest stream id Redis allows. */
    private static final String LAST_ID = "18446744073709551615-18446744073709551615";

    @Override
    public List<DeadLetter> list(String topic, String afterId, int limit) {
        Keys.checkTopic(topic);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        Partitions partitions = topics.recorded(topic);
        Partitions.Id after = afterId == null ? null : partitions.parse(afterId);
        List<Raw> merged = new ArrayList<>();
        for (int p = 0; p < partitions.count(); p++) {
            if (after != null && p <= after.partition() && after.streamId().equals(LAST_ID)) {
                continue; // nothing comes after the last possible id, and Redis refuses to range past it
            }
            // After (id, partition): in a later partition, an equal stream id comes after it; in the same or an
            // earlier one, it does not.
            Range<String> range = after == null ? Range.create("-", "+") : Range.from(p > after.partition()
                    ? Range.Boundary.including(after.streamId()) : Range.Boundary.excluding(after.streamId()),
                    Range.Boundary.unbounded());
            String key = keys.deadLetters(partitions.name(p));
            int partition = p;
            for (StreamMessage<String, byte[]> m : Calls.call("listing dead letters of " + partitions.name(p),
                    () -> redis.xrange(key, range, Limit.from(limit)))) {
                merged.add(new Raw(new Partitions.Id(partition, m.getId()), m));
            }
        }
        merged.sort(Comparator.comparing(Raw::id, Partitions.ORDER));
        List<Raw> page = merged.subList(0, Math.min(limit, merged.size()));
        Map<Partitions.Id, String> replayed = replayedOf(partitions, page);
        List<DeadLetter> out = new ArrayList<>(page.size());
        for (Raw r : page) {
            out.add(DeadLetterFields.decode(partitions, r.id().partition(), r.id().streamId(), r.message().getBody(),
                    replayed.get(r.id())));
        }
        return out;
    }

    @Override
    public int partitions(String topic) {
        Keys.checkTopic(topic);
        return topics.recorded(topic).count();
    }

    @Override
    public List<DeadLetter> listPartition(String topic, int partition, String afterId, int limit) {
        Keys.checkTopic(topic);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        Partitions partitions = topics.recorded(topic);
        if (partition < 0 || partition >= partitions.count()) {
            throw new IllegalArgumentException("topic " + topic + " has partitions 0 to " + (partitions.count() - 1)
                    + ", not " + partition);
        }
        Partitions.Id after = afterId == null ? null : partitions.parse(afterId);
        if (after != null && after.partition() != partition) {
            throw new IllegalArgumentException("id '" + afterId + "' names partition " + after.partition()
                    + " of topic " + topic + ", not " + partition);
        }
        if (after != null && after.streamId().equals(LAST_ID)) {
            return List.of(); // nothing comes after the last possible id, and Redis refuses to range past it
        }
        Range<String> range = after == null ? Range.create("-", "+")
                : Range.from(Range.Boundary.excluding(after.streamId()), Range.Boundary.unbounded());
        String name = partitions.name(partition);
        List<Raw> page = new ArrayList<>();
        for (StreamMessage<String, byte[]> m : Calls.call("listing dead letters of " + name,
                () -> redis.xrange(keys.deadLetters(name), range, Limit.from(limit)))) {
            page.add(new Raw(new Partitions.Id(partition, m.getId()), m));
        }
        Map<Partitions.Id, String> replayed = replayedOf(partitions, page);
        List<DeadLetter> out = new ArrayList<>(page.size());
        for (Raw r : page) {
            out.add(DeadLetterFields.decode(partitions, partition, r.id().streamId(), r.message().getBody(),
                    replayed.get(r.id())));
        }
        return out;
    }

    /** @throws IllegalArgumentException if the id does not name a partition of the topic as it must */
    @Override
    public Optional<DeadLetter> get(String topic, String deadLetterId) {
        Keys.checkTopic(topic);
        Partitions partitions = topics.recorded(topic);
        Partitions.Id id = partitions.parse(deadLetterId);
        String key = keys.deadLetters(partitions.name(id.partition()));
        List<StreamMessage<String, byte[]>> raw = Calls.call("reading dead letter " + deadLetterId,
                () -> redis.xrange(key, Range.create(id.streamId(), id.streamId())));
        if (raw.isEmpty()) {
            return Optional.empty();
        }
        List<Raw> one = List.of(new Raw(id, raw.get(0)));
        return Optional.of(DeadLetterFields.decode(partitions, id.partition(), id.streamId(), raw.get(0).getBody(),
                replayedOf(partitions, one).get(id)));
    }

    @Override
    public long count(String topic) {
        Keys.checkTopic(topic);
        Partitions partitions = topics.recorded(topic);
        long n = 0;
        for (String name : partitions.names()) {
            n += Calls.call("counting dead letters of " + name, () -> redis.xlen(keys.deadLetters(name)));
        }
        return n;
    }

    /**
     * Replays into the dead letter's own partition, so that a keyed message stays in its key's partition.
     *
     * @throws IllegalArgumentException if the id does not name a partition of the topic as it must
     */
    @Override
    public String replay(String topic, String deadLetterId) {
        Keys.checkTopic(topic);
        Partitions partitions = topics.recorded(topic);
        Partitions.Id id = partitions.parse(deadLetterId);
        Scripts.ReplayResult r = scripts.replay(partitions.name(id.partition()), id.streamId(),
                UUID.randomUUID().toString());
        switch (r.status()) {
            case 1:
                return partitions.qualify(id.partition(), r.streamId());
            case 0:
                throw new DeadLetterAlreadyReplayedException(topic, deadLetterId,
                        partitions.qualify(id.partition(), r.streamId()));
            case -1:
                throw new NoSuchDeadLetterException(topic, deadLetterId);
            default:
                throw new RunbusException("unexpected replay result " + r.status());
        }
    }

    /** @throws IllegalArgumentException if the id does not name a partition of the topic as it must */
    @Override
    public boolean purge(String topic, String deadLetterId) {
        Keys.checkTopic(topic);
        Partitions partitions = topics.recorded(topic);
        Partitions.Id id = partitions.parse(deadLetterId);
        String name = partitions.name(id.partition());
        boolean removed = Calls.call("purging dead letter " + deadLetterId, () -> {
            long n = redis.xdel(keys.deadLetters(name), id.streamId());
            redis.hdel(keys.replayed(name), id.streamId(), Keys.replayTokenField(id.streamId()));
            return n > 0;
        });
        if (removed) {
            afterRemoval.accept(topic);
        }
        return removed;
    }

    @Override
    public long purgeAll(String topic) {
        Keys.checkTopic(topic);
        Partitions partitions = topics.recorded(topic);
        long n = 0;
        for (String name : partitions.names()) {
            n += Calls.call("purging dead letters of " + name, () -> {
                long had = redis.xlen(keys.deadLetters(name));
                redis.del(keys.deadLetters(name), keys.replayed(name));
                return had;
            });
        }
        afterRemoval.accept(topic);
        return n;
    }

    /** The stream id each of these dead letters was replayed as (unqualified), if it was; one HMGET per partition. */
    private Map<Partitions.Id, String> replayedOf(Partitions partitions, List<Raw> raw) {
        Map<Integer, List<String>> byPartition = new HashMap<>();
        for (Raw r : raw) {
            byPartition.computeIfAbsent(r.id().partition(), p -> new ArrayList<>()).add(r.id().streamId());
        }
        Map<Partitions.Id, String> out = new HashMap<>();
        byPartition.forEach((p, ids) -> {
            String key = keys.replayed(partitions.name(p));
            var values = Calls.call("reading replays of " + partitions.name(p),
                    () -> redis.hmget(key, ids.toArray(new String[0])));
            for (var kv : values) {
                if (kv.hasValue()) {
                    out.put(new Partitions.Id(p, kv.getKey()), Replies.str(kv.getValue()));
                }
            }
        });
        return out;
    }
}
