package dev.runbus.internal;

import dev.runbus.DeadLetter;
import dev.runbus.DeadLetterAlreadyReplayedException;
import dev.runbus.DeadLetters;
import dev.runbus.NoSuchDeadLetterException;
import dev.runbus.RunbusException;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/** Reads and manages the dead-letter streams; the layout of a dead letter is in docs/wire-format.md. */
final class RedisDeadLetters implements DeadLetters {

    static final String TOPIC = "dl:topic";
    static final String STREAM_ID = "dl:stream_id";
    static final String GROUP = "dl:group";
    static final String CONSUMER = "dl:consumer";
    static final String DELIVERIES = "dl:deliveries";
    static final String REASON = "dl:reason";
    static final String AT = "dl:at";

    private final RedisCommands<String, byte[]> redis;
    private final Scripts scripts;
    private final Keys keys;

    RedisDeadLetters(RedisCommands<String, byte[]> redis, Scripts scripts, Keys keys) {
        this.redis = redis;
        this.scripts = scripts;
        this.keys = keys;
    }

    @Override
    public List<DeadLetter> list(String topic, String afterId, int limit) {
        Keys.checkTopic(topic);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        Range<String> range = afterId == null ? Range.create("-", "+")
                : Range.from(Range.Boundary.excluding(afterId), Range.Boundary.unbounded());
        List<StreamMessage<String, byte[]>> raw = Calls.call("listing dead letters of " + topic,
                () -> redis.xrange(keys.deadLetters(topic), range, Limit.from(limit)));
        Map<String, String> replayed = replayedOf(topic, raw);
        List<DeadLetter> out = new ArrayList<>(raw.size());
        for (StreamMessage<String, byte[]> m : raw) {
            out.add(decode(topic, m.getId(), m.getBody(), replayed.get(m.getId())));
        }
        return out;
    }

    @Override
    public Optional<DeadLetter> get(String topic, String deadLetterId) {
        Keys.checkTopic(topic);
        List<StreamMessage<String, byte[]>> raw = Calls.call("reading dead letter " + deadLetterId,
                () -> redis.xrange(keys.deadLetters(topic), Range.create(deadLetterId, deadLetterId)));
        if (raw.isEmpty()) {
            return Optional.empty();
        }
        StreamMessage<String, byte[]> m = raw.get(0);
        return Optional.of(decode(topic, m.getId(), m.getBody(), replayedOf(topic, raw).get(m.getId())));
    }

    @Override
    public long count(String topic) {
        Keys.checkTopic(topic);
        return Calls.call("counting dead letters of " + topic, () -> redis.xlen(keys.deadLetters(topic)));
    }

    @Override
    public String replay(String topic, String deadLetterId) {
        Keys.checkTopic(topic);
        Scripts.ReplayResult r = scripts.replay(topic, deadLetterId, UUID.randomUUID().toString());
        switch (r.status()) {
            case 1:
                return r.streamId();
            case 0:
                throw new DeadLetterAlreadyReplayedException(topic, deadLetterId, r.streamId());
            case -1:
                throw new NoSuchDeadLetterException(topic, deadLetterId);
            default:
                throw new RunbusException("unexpected replay result " + r.status());
        }
    }

    @Override
    public boolean purge(String topic, String deadLetterId) {
        Keys.checkTopic(topic);
        return Calls.call("purging dead letter " + deadLetterId, () -> {
            long removed = redis.xdel(keys.deadLetters(topic), deadLetterId);
            redis.hdel(keys.replayed(topic), deadLetterId, Keys.replayTokenField(deadLetterId));
            return removed > 0;
        });
    }

    @Override
    public long purgeAll(String topic) {
        Keys.checkTopic(topic);
        return Calls.call("purging dead letters of " + topic, () -> {
            long n = redis.xlen(keys.deadLetters(topic));
            redis.del(keys.deadLetters(topic), keys.replayed(topic));
            return n;
        });
    }

    private Map<String, String> replayedOf(String topic, List<StreamMessage<String, byte[]>> raw) {
        if (raw.isEmpty()) {
            return Map.of();
        }
        String[] ids = raw.stream().map(StreamMessage::getId).toArray(String[]::new);
        Map<String, String> out = new HashMap<>();
        var values = Calls.call("reading replays of " + topic, () -> redis.hmget(keys.replayed(topic), ids));
        for (var kv : values) {
            if (kv.hasValue()) {
                out.put(kv.getKey(), Replies.str(kv.getValue()));
            }
        }
        return out;
    }

    /** An entry that could not be decoded was dead-lettered for that; reading it must still work. */
    private static dev.runbus.Message decodeLeniently(String streamId, Map<String, byte[]> fields) {
        try {
            return WireFormat.decode(streamId, fields);
        } catch (RuntimeException bad) {
            return Dispatcher.placeholder(streamId);
        }
    }

    /**
     * Decodes a dead-letter entry without ever throwing: docs/wire-format.md lets other tools write dead
     * letters, and one entry that cannot be read must not stop a listing or a sweeper. A missing text field
     * reads as "", a missing or malformed {@code dl:deliveries} as 0, a missing or malformed {@code dl:at} as
     * the time in the dead letter's own id (when Redis added it); original fields that do not decode give a
     * placeholder message with no type, whose id is the original stream id (or the dead letter's id).
     */
    static DeadLetter decode(String topic, String id, Map<String, byte[]> fields, String replayedAs) {
        Map<String, byte[]> original = new LinkedHashMap<>();
        fields.forEach((k, v) -> {
            if (!k.startsWith("dl:")) {
                original.put(k, v);
            }
        });
        String streamId = text(fields, STREAM_ID);
        return new DeadLetter(id, topic, streamId, text(fields, GROUP), text(fields, CONSUMER),
                number(fields, DELIVERIES, 0), text(fields, REASON),
                Instant.ofEpochMilli(number(fields, AT, WireFormat.millisOf(id))),
                decodeLeniently(streamId.isEmpty() ? id : streamId, original), Optional.ofNullable(replayedAs));
    }

    private static String text(Map<String, byte[]> fields, String name) {
        return WireFormat.text(fields.get(name), "");
    }

    private static long number(Map<String, byte[]> fields, String name, long otherwise) {
        try {
            return Long.parseLong(text(fields, name).trim());
        } catch (NumberFormatException notANumber) {
            return otherwise;
        }
    }
}
