package dev.runbus.internal.registry;

import dev.runbus.Inspector.ConsumerInfo;
import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.Replies;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Tells live consumers from dead ones by their heartbeats, and deletes dead ones whose PEL is empty
 * (docs/architecture.md, rule 6). A consumer is dead when its last heartbeat is older than {@code consumerDeadAfter};
 * a consumer without one (another client's, or a runbus consumer that closed cleanly, which removes its
 * heartbeat) is dead when it has been idle that long. Times come from the Redis server's clock.
 *
 * <p>A consumer of a partitioned topic is a consumer of the group on every partition's stream (its reads name
 * them all): it is listed once, with its pending entries summed over the partitions and its idle time the
 * shortest of them, and it is deleted from each partition's group, each time only if it has no pending entry
 * on that partition. The heartbeats are the topic's, one per consumer.
 */
public final class ConsumerRegistry {

    private final RedisClusterCommands<String, byte[]> redis;
    private final Scripts scripts;
    private final Keys keys;
    private final TopicRegistry topics;
    private final long deadAfterMillis;
    private final SafeListener listener;

    public ConsumerRegistry(RedisClusterCommands<String, byte[]> redis, Scripts scripts, Keys keys, TopicRegistry topics,
                     Duration deadAfter, SafeListener listener) {
        this.redis = redis;
        this.scripts = scripts;
        this.keys = keys;
        this.topics = topics;
        this.deadAfterMillis = deadAfter.toMillis();
        this.listener = listener;
    }

    /** A consumer over all partitions, and the partitions whose group knows it. */
    private record Found(String name, long pending, long idle, List<Integer> partitions) {
    }

    public List<ConsumerInfo> consumers(String topic, String group) {
        return consumers(topic, group, find(topics.recorded(topic), group));
    }

    private List<ConsumerInfo> consumers(String topic, String group, List<Found> found) {
        Map<String, Long> beats = Calls.call("reading heartbeats of " + topic + "/" + group,
                () -> heartbeats(topic, group));
        long now = Calls.call("reading the Redis clock", this::redisNowMillis);
        List<ConsumerInfo> out = new ArrayList<>();
        for (Found f : found) {
            Long beat = beats.get(f.name());
            boolean alive = beat != null ? now - beat < deadAfterMillis : f.idle() < deadAfterMillis;
            out.add(new ConsumerInfo(f.name(), f.pending(), f.idle(), beat == null ? -1 : beat, alive));
        }
        return out;
    }

    /**
     * Deletes the dead consumers without pending entries from the group of every partition that knows them;
     * returns those deleted from all of them. One found alive or with pending entries on a partition meanwhile is
     * left in the groups that still know it, for a later round.
     */
    public List<String> pruneDead(String topic, String group) {
        Partitions partitions = topics.recorded(topic);
        List<Found> found = find(partitions, group);
        Map<String, Found> byName = new HashMap<>();
        found.forEach(f -> byName.put(f.name(), f));
        List<String> deleted = new ArrayList<>();
        for (ConsumerInfo c : consumers(topic, group, found)) {
            Found f = byName.get(c.name());
            if (c.alive() || c.pending() != 0) {
                continue;
            }
            // Its heartbeat first (keyed by topic), then each partition's group (keyed by partition): one script
            // per slot. A consumer found alive again keeps everything; one with pending entries on a partition
            // stays in that group, with no heartbeat, until they are claimed and a later round deletes it.
            if (scripts.forgetConsumer(topic, group, c.name(), deadAfterMillis) == 0) {
                continue;
            }
            boolean all = true;
            for (int p : f.partitions()) {
                all &= scripts.deleteConsumer(partitions.name(p), group, c.name()) == 1;
                if (!all) {
                    break;
                }
            }
            if (all) {
                deleted.add(c.name());
                listener.onConsumerDeleted(topic, group, c.name());
            }
        }
        return deleted;
    }

    /** XINFO CONSUMERS of every partition's stream, merged by consumer name, in the order first seen. */
    private List<Found> find(Partitions partitions, String group) {
        Map<String, Found> merged = new LinkedHashMap<>();
        for (int p = 0; p < partitions.count(); p++) {
            String stream = keys.stream(partitions.name(p));
            List<Object> raw = Calls.call("listing consumers of " + partitions.name(p) + "/" + group,
                    () -> redis.xinfoConsumers(stream, group));
            for (Object c : raw) {
                Map<String, Object> info = Replies.info(c);
                String name = Replies.str(info.get("name"));
                long pending = Replies.num(info.get("pending"));
                long idle = Replies.num(info.get("idle"));
                Found before = merged.get(name);
                List<Integer> in = new ArrayList<>(before == null ? List.of() : before.partitions());
                in.add(p);
                merged.put(name, before == null ? new Found(name, pending, idle, in)
                        : new Found(name, before.pending() + pending, Math.min(before.idle(), idle), in));
            }
        }
        return new ArrayList<>(merged.values());
    }

    private Map<String, Long> heartbeats(String topic, String group) {
        Map<String, Long> beats = new HashMap<>();
        for (ScoredValue<byte[]> v : redis.zrangeWithScores(keys.heartbeats(topic, group), 0, -1)) {
            beats.put(Replies.str(v.getValue()), (long) v.getScore());
        }
        return beats;
    }

    private long redisNowMillis() {
        List<byte[]> t = redis.time();
        return Long.parseLong(Replies.str(t.get(0))) * 1000 + Long.parseLong(Replies.str(t.get(1))) / 1000;
    }
}
