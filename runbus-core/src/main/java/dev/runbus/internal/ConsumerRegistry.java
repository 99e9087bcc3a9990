package dev.runbus.internal;

import dev.runbus.Inspector.ConsumerInfo;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Tells live consumers from dead ones by their heartbeats, and deletes dead ones whose PEL is empty
 * (DESIGN.md rule 6). A consumer is dead when its last heartbeat is older than {@code consumerDeadAfter};
 * a consumer without one (another client's, or a runbus consumer that closed cleanly, which removes its
 * heartbeat) is dead when it has been idle that long. Times come from the Redis server's clock.
 */
final class ConsumerRegistry {

    private final RedisCommands<String, byte[]> redis;
    private final Scripts scripts;
    private final Keys keys;
    private final long deadAfterMillis;
    private final SafeListener listener;

    ConsumerRegistry(RedisCommands<String, byte[]> redis, Scripts scripts, Keys keys, Duration deadAfter,
                     SafeListener listener) {
        this.redis = redis;
        this.scripts = scripts;
        this.keys = keys;
        this.deadAfterMillis = deadAfter.toMillis();
        this.listener = listener;
    }

    List<ConsumerInfo> consumers(String topic, String group) {
        List<Object> raw = Calls.call("listing consumers of " + topic + "/" + group,
                () -> redis.xinfoConsumers(keys.stream(topic), group));
        Map<String, Long> beats = Calls.call("reading heartbeats of " + topic + "/" + group,
                () -> heartbeats(topic, group));
        long now = Calls.call("reading the Redis clock", this::redisNowMillis);
        List<ConsumerInfo> out = new ArrayList<>(raw.size());
        for (Object c : raw) {
            Map<String, Object> info = Replies.info(c);
            String name = Replies.str(info.get("name"));
            long idle = Replies.num(info.get("idle"));
            Long beat = beats.get(name);
            boolean alive = beat != null ? now - beat < deadAfterMillis : idle < deadAfterMillis;
            out.add(new ConsumerInfo(name, Replies.num(info.get("pending")), idle, beat == null ? -1 : beat, alive));
        }
        return out;
    }

    List<String> pruneDead(String topic, String group) {
        List<String> deleted = new ArrayList<>();
        for (ConsumerInfo c : consumers(topic, group)) {
            if (!c.alive() && c.pending() == 0
                    && scripts.deleteConsumer(topic, group, c.name(), deadAfterMillis) == 1) {
                deleted.add(c.name());
                listener.onConsumerDeleted(topic, group, c.name());
            }
        }
        return deleted;
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
