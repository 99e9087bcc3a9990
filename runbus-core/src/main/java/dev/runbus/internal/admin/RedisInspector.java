package dev.runbus.internal.admin;

import dev.runbus.Inspector;
import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.Replies;
import dev.runbus.internal.registry.ConsumerRegistry;
import dev.runbus.internal.registry.TopicRegistry;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.models.stream.PendingMessage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * XINFO and XPENDING, read into plain records. A partitioned topic is shown as one: lengths, pending entries and
 * lags are summed over its partitions' streams, and the entry ids shown are qualified with their partition
 * ({@link Partitions#qualify}). The partition count is the one recorded in Redis ({@link TopicRegistry#recorded}):
 * tools are often not configured for the topics they look at.
 */
public final class RedisInspector implements Inspector {

    private final RedisClusterCommands<String, byte[]> redis;
    private final Keys keys;
    private final TopicRegistry topics;
    private final ConsumerRegistry consumers;
    private final PartitionReport partitionReport;
    private final Retention retention;
    private final MessageIdReader ids;

    public RedisInspector(RedisClusterCommands<String, byte[]> redis, Keys keys, TopicRegistry topics, ConsumerRegistry consumers,
                   Retention retention) {
        this.redis = redis;
        this.retention = retention;
        this.ids = new MessageIdReader(redis);
        this.keys = keys;
        this.topics = topics;
        this.consumers = consumers;
        this.partitionReport = new PartitionReport(redis, keys);
    }

    @Override
    public List<StreamInfo> streams() {
        return streams(null, Integer.MAX_VALUE);
    }

    @Override
    public List<StreamInfo> streams(String afterTopic, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        List<StreamInfo> out = new ArrayList<>();
        for (String topic : topics.all()) {
            if (out.size() == limit) {
                break;
            }
            if (afterTopic != null && topic.compareTo(afterTopic) <= 0) {
                continue;
            }
            out.add(stream(topic).orElseGet(() -> new StreamInfo(topic, 0, null, null, 0,
                    deadLetters(topics.recorded(topic)))));
        }
        return out;
    }

    /**
     * For a partitioned topic: empty when no partition's stream exists; the length is summed over the partitions,
     * the first id is the oldest first entry of any partition and the last id the newest id any partition added
     * (both by {@link Partitions#ORDER}, qualified with the partition that holds them; null when no partition has
     * one), and the groups are those of the partition that has the most.
     */
    @Override
    public Optional<StreamInfo> stream(String topic) {
        Keys.checkTopic(topic);
        Partitions partitions = topics.recorded(topic);
        long length = 0;
        int groups = 0;
        Partitions.Id first = null;
        Partitions.Id last = null;
        boolean exists = false;
        for (int p = 0; p < partitions.count(); p++) {
            String key = keys.stream(partitions.name(p));
            if (Calls.call("reading stream " + key, () -> redis.exists(key)) == 0) {
                continue;
            }
            exists = true;
            Map<String, Object> info = Replies.info(Calls.call("reading stream " + key, () -> redis.xinfoStream(key)));
            length += Replies.num(info.get("length"));
            groups = Math.max(groups, (int) Replies.num(info.get("groups")));
            List<Object> f = Replies.list(info.get("first-entry"));
            first = f.isEmpty() ? first : earliest(first, new Partitions.Id(p, Replies.str(f.get(0))));
            String l = Replies.str(info.get("last-generated-id"));
            last = l == null || (partitions.partitioned() && "0-0".equals(l)) ? last
                    : latest(last, new Partitions.Id(p, l));
        }
        if (!exists) {
            return Optional.empty();
        }
        return Optional.of(new StreamInfo(topic, length, qualified(partitions, first), qualified(partitions, last),
                groups, deadLetters(partitions)));
    }

    /**
     * ZCARD of each partition's flow queue (one member per parked entry), holds (one per slot held) and later (one
     * per key its rate holds back).
     */
    @Override
    public FlowInfo flow(String topic) {
        Keys.checkTopic(topic);
        long parked = 0;
        long held = 0;
        long throttled = 0;
        for (String name : topics.recorded(topic).names()) {
            String[] flow = keys.flow(name);
            parked += Calls.call("counting parked entries of " + name, () -> redis.zcard(flow[Keys.FLOW_QUEUE]));
            held += Calls.call("counting flow holds of " + name, () -> redis.zcard(flow[Keys.FLOW_HOLDS]));
            throttled += Calls.call("counting throttled flow keys of " + name,
                    () -> redis.zcard(flow[Keys.FLOW_LATER]));
            // The topic's own place there, while its rate holds every key back, is not a key.
            throttled -= Calls.call("reading the topic's rate of " + name, () -> redis.zscore(flow[Keys.FLOW_LATER],
                    "\0topic".getBytes(java.nio.charset.StandardCharsets.UTF_8))) == null ? 0 : 1;
        }
        return new FlowInfo(topic, parked, held, throttled);
    }

    @Override
    public List<FlowKeyInfo> flowKeys(String topic, String afterKey, int max) {
        Keys.checkTopic(topic);
        if (max < 1 || max > 1000) {
            throw new IllegalArgumentException("max must be 1 to 1000, got " + max);
        }
        if (afterKey != null) {
            dev.runbus.Message.checkFlowKey(afterKey);
        }
        return new FlowKeyReader(redis, keys).keys(topic, topics.recorded(topic), afterKey, max);
    }

    /** ZLEXCOUNT of the key's members in its partition's flow queue ({@code <key> NUL ...}, below {@code <key> \1}). */
    @Override
    public long flowWaiting(String topic, String flowKey) {
        Keys.checkTopic(topic);
        dev.runbus.Message.checkFlowKey(flowKey);
        Partitions partitions = topics.recorded(topic);
        String queue = keys.flow(partitions.name(partitions.partitionFor(flowKey)))[Keys.FLOW_QUEUE];
        return Calls.call("counting the waiting entries of flow key " + flowKey + " of " + topic,
                () -> redis.zlexcount(queue, MessageIdReader.membersOf(flowKey)));
    }

    private long deadLetters(Partitions partitions) {
        long n = 0;
        for (String name : partitions.names()) {
            n += Calls.call("counting dead letters of " + name, () -> redis.xlen(keys.deadLetters(name)));
        }
        return n;
    }

    /**
     * For a partitioned topic, each group once: its consumers are those of the partition where it has the most,
     * its pending entries and lag are summed (the lag is -1 when any partition's is unknown), and its last
     * delivered id is the newest of any partition, qualified.
     */
    @Override
    public List<GroupInfo> groups(String topic) {
        Keys.checkTopic(topic);
        Partitions partitions = topics.recorded(topic);
        Map<String, GroupInfo> merged = new LinkedHashMap<>();
        Map<String, Partitions.Id> lastDelivered = new LinkedHashMap<>();
        for (int p = 0; p < partitions.count(); p++) {
            String key = keys.stream(partitions.name(p));
            if (Calls.call("reading stream " + key, () -> redis.exists(key)) == 0) {
                continue;
            }
            for (Object g : Calls.call("reading groups of " + key, () -> redis.xinfoGroups(key))) {
                Map<String, Object> info = Replies.info(g);
                String name = Replies.str(info.get("name"));
                Object l = info.get("lag");
                GroupInfo here = new GroupInfo(name, (int) Replies.num(info.get("consumers")),
                        Replies.num(info.get("pending")), null, l == null ? -1 : Replies.num(l));
                GroupInfo before = merged.get(name);
                merged.put(name, before == null ? here : new GroupInfo(name,
                        Math.max(before.consumers(), here.consumers()), before.pending() + here.pending(), null,
                        before.lag() < 0 || here.lag() < 0 ? -1 : before.lag() + here.lag()));
                lastDelivered.merge(name, new Partitions.Id(p, Replies.str(info.get("last-delivered-id"))),
                        RedisInspector::latest);
            }
        }
        List<GroupInfo> out = new ArrayList<>(merged.size());
        merged.forEach((name, g) -> out.add(new GroupInfo(name, g.consumers(), g.pending(),
                qualified(partitions, lastDelivered.get(name)), g.lag())));
        return out;
    }

    @Override
    public List<ConsumerInfo> consumers(String topic, String group) {
        Keys.checkTopic(topic);
        Keys.checkName("group", group);
        return consumers.consumers(topic, group);
    }

    /** For a partitioned topic, the oldest of all partitions by {@link Partitions#ORDER}, with qualified ids. */
    @Override
    public List<PendingEntry> pending(String topic, String group, int limit) {
        Keys.checkTopic(topic);
        Keys.checkName("group", group);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        Partitions partitions = topics.recorded(topic);
        TreeMap<Partitions.Id, PendingMessage> found = new TreeMap<>(Partitions.ORDER);
        for (int p = 0; p < partitions.count(); p++) {
            String key = keys.stream(partitions.name(p));
            List<PendingMessage> raw = Calls.call("reading pending entries of " + key + "/" + group,
                    () -> redis.xpending(key, group, Range.create("-", "+"), Limit.from(limit)));
            for (PendingMessage m : raw) {
                found.put(new Partitions.Id(p, m.getId()), m);
            }
        }
        List<PendingEntry> out = new ArrayList<>(Math.min(limit, found.size()));
        for (Map.Entry<Partitions.Id, PendingMessage> e : found.entrySet()) {
            if (out.size() == limit) {
                break;
            }
            out.add(entry(partitions, e.getKey().partition(), e.getValue()));
        }
        return out;
    }

    @Override
    public MessageIds pendingMessageIds(String topic, String group, int partition, long fromMillis, int max) {
        Keys.checkName("group", group);
        return ids.pending(streamOf(topic, partition, max), group, fromMillis, max);
    }

    @Override
    public MessageIds undeliveredMessageIds(String topic, String group, int partition, int max) {
        Keys.checkName("group", group);
        return ids.undelivered(streamOf(topic, partition, max), group, max);
    }

    @Override
    public MessageIds flowWaitingMessageIds(String topic, String flowKey, int max) {
        Keys.checkTopic(topic);
        dev.runbus.Message.checkFlowKey(flowKey);
        requireMax(max);
        Partitions partitions = topics.recorded(topic);
        return ids.flowWaiting(keys.flow(partitions.name(partitions.partitionFor(flowKey))), flowKey, max);
    }

    /** The stream of a partition of a topic, checked to be one, for a read of at most {@code max}. */
    private String streamOf(String topic, int partition, int max) {
        Keys.checkTopic(topic);
        requireMax(max);
        Partitions partitions = topics.recorded(topic);
        if (partition < 0 || partition >= partitions.count()) {
            throw new IllegalArgumentException("topic " + topic + " has no partition " + partition);
        }
        return keys.stream(partitions.name(partition));
    }

    private static void requireMax(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max must be at least 1, got " + max);
        }
    }

    /**
     * {@code streamId} is an id as handed out: qualified with its partition for a partitioned topic.
     *
     * @throws IllegalArgumentException if it does not name a partition of the topic as it must
     */
    @Override
    public Optional<PendingEntry> pendingEntry(String topic, String group, String streamId) {
        Keys.checkTopic(topic);
        Keys.checkName("group", group);
        Partitions partitions = topics.recorded(topic);
        Partitions.Id id = partitions.parse(streamId);
        String key = keys.stream(partitions.name(id.partition()));
        List<PendingMessage> raw = Calls.call("reading pending entry " + streamId + " of " + topic + "/" + group,
                () -> redis.xpending(key, group, Range.create(id.streamId(), id.streamId()), Limit.from(1)));
        return raw.isEmpty() ? Optional.empty() : Optional.of(entry(partitions, id.partition(), raw.get(0)));
    }

    @Override
    public List<PartitionInfo> partitions(String topic, String group) {
        Keys.checkTopic(topic);
        Keys.checkName("group", group);
        return partitionReport.of(topics.recorded(topic), group);
    }

    @Override
    public List<RetentionInfo> retention(String topic) {
        Keys.checkTopic(topic);
        Partitions partitions = topics.recorded(topic);
        List<RetentionInfo> out = new ArrayList<>(partitions.count());
        for (int p = 0; p < partitions.count(); p++) {
            String name = partitions.name(p);
            String key = keys.stream(name);
            long length = Calls.call("reading stream " + key, () -> redis.xlen(key));
            List<io.lettuce.core.StreamMessage<String, byte[]>> first = Calls.call("reading stream " + key,
                    () -> redis.xrange(key, Range.create("-", "+"), Limit.from(1)));
            Retention.Result r = retention.peek(name);
            out.add(new RetentionInfo(p, key, length, first.isEmpty() ? null : first.get(0).getId(), r.neededFrom(),
                    r.heldBy()));
        }
        return out;
    }

    private static PendingEntry entry(Partitions partitions, int partition, PendingMessage p) {
        return new PendingEntry(partitions.qualify(partition, p.getId()), p.getConsumer(), p.getRedeliveryCount(),
                p.getMsSinceLastDelivery());
    }

    private static String qualified(Partitions partitions, Partitions.Id id) {
        return id == null ? null : partitions.qualify(id.partition(), id.streamId());
    }

    private static Partitions.Id earliest(Partitions.Id a, Partitions.Id b) {
        return a == null || Partitions.ORDER.compare(b, a) < 0 ? b : a;
    }

    private static Partitions.Id latest(Partitions.Id a, Partitions.Id b) {
        return a == null || Partitions.ORDER.compare(b, a) > 0 ? b : a;
    }
}
