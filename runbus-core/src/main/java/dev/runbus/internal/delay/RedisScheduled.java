package dev.runbus.internal.delay;

import dev.runbus.Message;
import dev.runbus.RunbusException;
import dev.runbus.Scheduled;
import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.WireFormat;
import dev.runbus.internal.registry.TopicRegistry;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lists, counts and cancels the entries of topics' delay sets (keys in {@link Keys}: {@code delayed} and
 * {@code delayed:entries} of each partition). Ids are qualified with their partition as {@link Partitions#qualify}
 * does. An entry another program wrote into a delay set, whose fields cannot be read, is left out of a listing and
 * reported ({@link dev.runbus.BusListener#onLoopError}, and logged): one such entry must not make the listing of
 * the topic fail. When due, the delay mover sets it aside as a dead letter.
 */
public final class RedisScheduled implements Scheduled {

    private static final Logger log = LoggerFactory.getLogger(RedisScheduled.class);

    private final RedisClusterCommands<String, byte[]> redis;
    private final Scripts scripts;
    private final Keys keys;
    private final TopicRegistry topics;
    private final SafeListener listener;

    public RedisScheduled(RedisClusterCommands<String, byte[]> redis, Scripts scripts, Keys keys, TopicRegistry topics,
                   SafeListener listener) {
        this.redis = redis;
        this.scripts = scripts;
        this.keys = keys;
        this.topics = topics;
        this.listener = listener;
    }

    @Override
    public List<ScheduledEntry> list(String topic, int limit) {
        Keys.checkTopic(topic);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        Partitions partitions = topics.recorded(topic);
        List<ScheduledEntry> merged = new ArrayList<>();
        List<String> unreadable = new ArrayList<>();
        for (int p = 0; p < partitions.count(); p++) {
            String name = partitions.name(p);
            for (Scripts.ScheduledRow row : Calls.call("listing scheduled entries of " + topic,
                    () -> scripts.scheduled(name, limit))) {
                if (row.unreadable() != null) {
                    unreadable.add(partitions.qualify(p, row.id()) + " (" + row.unreadable() + ")");
                } else {
                    merged.add(entry(partitions, p, row));
                }
            }
        }
        if (!unreadable.isEmpty()) {
            RunbusException report = new RunbusException("scheduled entries of topic " + topic + " left out of the "
                    + "listing, not written as runbus writes them: " + String.join(", ", unreadable) + "; when due "
                    + "they are set aside as dead letters");
            log.warn(report.getMessage());
            listener.onLoopError("scheduled list", report);
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
            message = WireFormat.placeholder(id);
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
