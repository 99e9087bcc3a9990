package dev.runbus.internal;

import io.lettuce.core.api.sync.RedisCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The set of topic names, so that the inspector can list streams without scanning the keyspace. Each
 * process adds a topic once, on its first publish or subscribe.
 */
final class TopicRegistry {

    private final RedisCommands<String, byte[]> redis;
    private final Keys keys;
    private final Set<String> known = ConcurrentHashMap.newKeySet();

    TopicRegistry(RedisCommands<String, byte[]> redis, Keys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    void register(String topic) {
        if (!known.contains(topic)) {
            Calls.call("registering topic " + topic, () -> redis.sadd(keys.topics(), WireFormat.utf8(topic)));
            known.add(topic);
        }
    }

    List<String> all() {
        List<String> names = new ArrayList<>();
        for (byte[] b : Calls.call("listing topics", () -> redis.smembers(keys.topics()))) {
            names.add(Replies.str(b));
        }
        names.sort(null);
        return names;
    }
}
