package dev.runbus.internal;

import dev.runbus.Message;
import dev.runbus.Scheduled;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Lists, counts and cancels the entries of topics' delay sets (keys in {@link Keys}: {@code delayed} and
 * {@code delayed:entries} of each partition). Ids are qualified with their partition as {@link Partitions#qualify}
 * does.
 */
final class RedisScheduled implements Scheduled {

    private final RedisClusterCommands<String, byte[]> redis;
    private final Scripts scripts;
    private final Keys keys;
    private final TopicRegistry topics;

    RedisScheduled(RedisClusterCommands<String, byte[]> redis, Scripts scripts, Keys keys, TopicRegistry topics) {
        this.redis = redis;
        this.scripts = scripts;
        this.keys = keys;
        this.topics = topics;
    }

    @Override
    public List<ScheduledEntry> list(String topic, int limit) {
        Keys.checkTopic(topic);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        Partitions partitions = topics.recorded(topic);
        List<ScheduledEntry> merged = new ArrayList<>();
        for (int p = 0; p < partitions.count(); p++) {
            String name = partitions.name(p);
            for (Scripts.ScheduledRow row : Calls.call("listing scheduled entries of " + topic,
                    () -> scripts.scheduled(name, limit))) {
                merged.add(entry(partitions, p, row));
            }
        }
        merged.sort(Comparator.comparing(ScheduledEntry::dueAt).thenComparing(ScheduledEntry::id));
        return List.copyOf(merged.subList(0, Math.min(limit, merged.size())));
    }

    private static ScheduledEntry entry(Partitions partitions, int p, Scripts.ScheduledRow row) {
        String id = partitions.qualify(p, row.id());
        Map<String, byte[]> fields = row.fields();
        Message message;
        try {
            message = WireFormat.decode(id, fields);
        } catch (RuntimeException bad) { // written by another program: show what can be shown
            message = Dispatcher.placeholder(id);
        }
        return new ScheduledEntry(id, partitions.topic(), Instant.ofEpochMilli(row.dueMillis()),
                WireFormat.attemptsBefore(fields), WireFormat.text(fields.get(WireFormat.FOR_GROUP), null), message);
    }

    @Override
    public boolean cancel(String topic, String id) {
        Keys.checkTopic(topic);
        Partitions partitions = topics.recorded(topic);
        Partitions.Id parsed = partitions.parse(id);
        String name = partitions.name(parsed.partition());
        return Calls.call("cancelling scheduled entry " + id + " of " + topic,
                () -> scripts.cancelScheduled(name, parsed.streamId()));
    }

    @Override
    public long count(String topic) {
        Keys.checkTopic(topic);
        Partitions partitions = topics.recorded(topic);
        long n = 0;
        for (String name : partitions.names()) {
            n += Calls.call("counting scheduled entries of " + topic, () -> redis.zcard(keys.delayed(name)));
        }
        return n;
    }
}
