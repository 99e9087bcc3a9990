package dev.runbus.internal.redis;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds every Redis key the bus uses. The keys of one partition share a hash tag, so each Lua script touches
 * a single Redis Cluster slot: the tag is the partition's name, {@code topic} for a topic of one partition and
 * {@code topic#p.k} for partition {@code p} of a topic of several ({@link Partitions#name}), so that partitions
 * land on evenly spread slots ({@link SlotTags}). Below, {@code name} is a partition's name. The layout (docs/wire-format.md):
 *
 * <pre>
 * {prefix}:{name}:stream              the partition's stream
 * {prefix}:{name}:dead                its dead-letter stream
 * {prefix}:{name}:delayed             sorted set: scheduled entry id -> due time, epoch ms (Redis clock)
 * {prefix}:{name}:delayed:entries     hash: scheduled entry id -> its fields, MessagePack array
 *                                     [field, value, field, value, ...] (Lua's cmsgpack)
 * {prefix}:{name}:dead:replayed       hash: dead letter id -> stream id it was replayed as, and
 *                                     "{dead letter id}:token" -> token of the call that replayed it
 * {prefix}:{name}:dead:call:{token}   string, expires: what one dead-letter move did (dead letter id or
 *                                     "trimmed"), so that the same call sent again answers the same
 * {prefix}:{name}:lease:{group}       string, expires: "{fencing token} {consumer} {acquired, epoch ms}
 *                                     {acquisition id}" in an ordered group
 * {prefix}:{name}:fence:{group}       counter: the last fencing token handed out for the partition
 * {prefix}:{name}:started:{group}     string: the entry whose handler started last, in an ordered group
 * {prefix}:{name}:retry-at:{group}    the head entry waiting for a retry, in an ordered group
 * {prefix}:{name}:starts:{group}      hash: pending entry id -> handler starts on it, in an unordered group
 * {prefix}:{name}:flow:*              per-key concurrency caps (flow.lua, docs/flow-control.md)
 * {prefix}:{topic}:heartbeats:{group} sorted set: consumer -> last heartbeat, epoch ms (Redis clock)
 * {prefix}:{topic}:members:{group}    sorted set: consumer of an ordered group -> end of its membership, epoch
 *                                     ms (Redis clock)
 * {prefix}:{topic}:partitions         string: the topic's partition count, recorded on first use
 * {prefix}:topics                     set of topic names, for the inspector
 * </pre>
 */
public final class Keys {

    private final String prefix;

    public Keys(String prefix) {
        this.prefix = prefix;
    }

    public String stream(String name) {
        return tagged(name) + ":stream";
    }

    public String deadLetters(String name) {
        return tagged(name) + ":dead";
    }

    /** Set while the topic has dead letters, so that one process hears each rise from zero (DeadLetterAlarm). */
    public String deadLettersRaised(String topic) {
        return tagged(topic) + ":dead:raised";
    }

    /** The delay set of a partition: scheduled entry ids scored by due time. */
    public String delayed(String name) {
        return tagged(name) + ":delayed";
    }

    /** The fields of the scheduled entries of a partition, by id. */
    public String delayedEntries(String name) {
        return tagged(name) + ":delayed:entries";
    }

    public String replayed(String name) {
        return tagged(name) + ":dead:replayed";
    }

    /** The record of one dead-letter move, by the token of its call. */
    public String deadLetterCall(String name, String token) {
        return tagged(name) + ":dead:call:" + token;
    }

    /** The field of the replay record that holds the token of the call that replayed a dead letter. */
    public static String replayTokenField(String deadLetterId) {
        return deadLetterId + ":token";
    }

    /** The lease of a partition in an ordered group. */
    public String lease(String name, String group) {
        return tagged(name) + ":lease:" + group;
    }

    /** The fencing-token counter of a partition in an ordered group. */
    public String fence(String name, String group) {
        return tagged(name) + ":fence:" + group;
    }

    /** The start record of a partition in an ordered group: the entry whose handler started last (ordered_start.lua). */
    public String started(String name, String group) {
        return tagged(name) + ":started:" + group;
    }

    /** The retry record of a partition in an ordered group: its head entry waiting for a retry (ordered_retry_at.lua). */
    public String retryAt(String name, String group) {
        return tagged(name) + ":retry-at:" + group;
    }

    /**
     * The start record of a partition in an unordered group: pending entry id -> the number of handler starts on
     * it (record_starts.lua); a field goes with its entry's ack.
     */
    public String starts(String name, String group) {
        return tagged(name) + ":starts:" + group;
    }

    /** In {@link #flow}: the parked entries (a stream), their queue (one member each), and the holds (one per slot). */
    public static final int FLOW_PARKED = 1;
    public static final int FLOW_QUEUE = 2;
    public static final int FLOW_HOLDS = 3;
    /** In {@link #flow}: the holds again, counted per key by lex range; and the caps, rates and weights (a hash). */
    public static final int FLOW_HELD = 4;
    public static final int FLOW_CAPS = 5;
    /** In {@link #flow}: the keys only their rate holds back. */
    public static final int FLOW_LATER = 8;
    /** In {@link #flow}: the keys waiting for a slot of the topic's cap. */
    public static final int FLOW_READY = 9;

    /**
     * The stream and flow-control keys of a partition, in the order {@code flow.lua} takes them: stream, parked,
     * queue, holds, held, caps, seq, tat, later, ready, tags, lanes, then the ready sets of the priority lanes 0-4 and
     * 6-9 (lane 5's, the default priority's, is ready; docs/flow-control.md).
     */
    public String[] flow(String name) {
        String base = tagged(name) + ":flow:";
        List<String> keys = new ArrayList<>(List.of(stream(name), base + "parked", base + "queue", base + "holds",
                base + "held", base + "caps", base + "seq", base + "tat", base + "later", base + "ready", base + "tags",
                base + "lanes"));
        for (int lane = 0; lane <= 9; lane++) {
            if (lane != 5) {
                keys.add(base + "ready:" + lane);
            }
        }
        return keys.toArray(String[]::new);
    }

    /** The members of an ordered group of a topic. */
    public String members(String topic, String group) {
        return tagged(topic) + ":members:" + group;
    }

    /** The recorded partition count of a topic. */
    public String partitionCount(String topic) {
        return tagged(topic) + ":partitions";
    }

    public String heartbeats(String topic, String group) {
        return tagged(topic) + ":heartbeats:" + group;
    }

    public String topics() {
        return prefix + ":topics";
    }

    private String tagged(String name) {
        return prefix + ":{" + name + "}";
    }

    /**
     * Topic names become part of a hash tag: no braces, no whitespace, not empty, at most 200 chars; and no
     * {@code #}, which separates a topic from its partition number in a partition's name.
     */
    public static String checkTopic(String topic) {
        checkName("topic", topic);
        if (topic.indexOf('{') >= 0 || topic.indexOf('}') >= 0 || topic.indexOf('#') >= 0) {
            throw new IllegalArgumentException("topic must not contain braces or '#': '" + topic + "'");
        }
        return topic;
    }

    /** Group and consumer names: not empty, no whitespace or control characters, at most 200 chars. */
    public static String checkName(String what, String name) {
        if (name == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (name.isEmpty() || name.length() > 200) {
            throw new IllegalArgumentException(what + " must have 1 to 200 characters, got '" + name + "'");
        }
        if (name.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
            throw new IllegalArgumentException(what + " must not contain whitespace: '" + name + "'");
        }
        return name;
    }
}
