package dev.runbus.internal;

import dev.runbus.Inspector;
import io.lettuce.core.Limit;
import io.lettuce.core.models.stream.PendingMessage;
import io.lettuce.core.Range;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** XINFO and XPENDING, read into plain records. */
final class RedisInspector implements Inspector {

    private final RedisCommands<String, byte[]> redis;
    private final Keys keys;
    private final TopicRegistry topics;
    private final ConsumerRegistry consumers;

    RedisInspector(RedisCommands<String, byte[]> redis, Keys keys, TopicRegistry topics, ConsumerRegistry consumers) {
        this.redis = redis;
        this.keys = keys;
        this.topics = topics;
        this.consumers = consumers;
    }

    @Override
    public List<StreamInfo> streams() {
        List<StreamInfo> out = new ArrayList<>();
        for (String topic : topics.all()) {
            out.add(stream(topic).orElseGet(() -> new StreamInfo(topic, 0, null, null, 0, deadLetters(topic))));
        }
        return out;
    }

    @Override
    public Optional<StreamInfo> stream(String topic) {
        Keys.checkTopic(topic);
        String key = keys.stream(topic);
        if (Calls.call("reading stream " + topic, () -> redis.exists(key)) == 0) {
            return Optional.empty();
        }
        long dead = deadLetters(topic);
        Map<String, Object> info = Replies.info(Calls.call("reading stream " + topic, () -> redis.xinfoStream(key)));
        List<Object> first = Replies.list(info.get("first-entry"));
        return Optional.of(new StreamInfo(topic, Replies.num(info.get("length")),
                first.isEmpty() ? null : Replies.str(first.get(0)), Replies.str(info.get("last-generated-id")),
                (int) Replies.num(info.get("groups")), dead));
    }

    private long deadLetters(String topic) {
        return Calls.call("counting dead letters of " + topic, () -> redis.xlen(keys.deadLetters(topic)));
    }

    @Override
    public List<GroupInfo> groups(String topic) {
        Keys.checkTopic(topic);
        List<GroupInfo> out = new ArrayList<>();
        if (Calls.call("reading stream " + topic, () -> redis.exists(keys.stream(topic))) == 0) {
            return out;
        }
        for (Object g : Calls.call("reading groups of " + topic, () -> redis.xinfoGroups(keys.stream(topic)))) {
            Map<String, Object> info = Replies.info(g);
            Object lag = info.get("lag");
            out.add(new GroupInfo(Replies.str(info.get("name")), (int) Replies.num(info.get("consumers")),
                    Replies.num(info.get("pending")), Replies.str(info.get("last-delivered-id")),
                    lag == null ? -1 : Replies.num(lag)));
        }
        return out;
    }

    @Override
    public List<ConsumerInfo> consumers(String topic, String group) {
        Keys.checkTopic(topic);
        Keys.checkName("group", group);
        return consumers.consumers(topic, group);
    }

    @Override
    public List<PendingEntry> pending(String topic, String group, int limit) {
        Keys.checkTopic(topic);
        Keys.checkName("group", group);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        List<PendingMessage> raw = Calls.call("reading pending entries of " + topic + "/" + group,
                () -> redis.xpending(keys.stream(topic), group, Range.create("-", "+"), Limit.from(limit)));
        List<PendingEntry> out = new ArrayList<>(raw.size());
        for (PendingMessage p : raw) {
            out.add(entry(p));
        }
        return out;
    }

    @Override
    public Optional<PendingEntry> pendingEntry(String topic, String group, String streamId) {
        Keys.checkTopic(topic);
        Keys.checkName("group", group);
        List<PendingMessage> raw = Calls.call("reading pending entry " + streamId + " of " + topic + "/" + group,
                () -> redis.xpending(keys.stream(topic), group, Range.create(streamId, streamId), Limit.from(1)));
        return raw.isEmpty() ? Optional.empty() : Optional.of(entry(raw.get(0)));
    }

    @Override
    public List<PartitionInfo> partitions(String topic, String group) {
        throw new UnsupportedOperationException("not yet");
    }

    private static PendingEntry entry(PendingMessage p) {
        return new PendingEntry(p.getId(), p.getConsumer(), p.getRedeliveryCount(), p.getMsSinceLastDelivery());
    }
}
