package dev.runbus.internal;

/**
 * Builds every Redis key the bus uses. All keys of one topic share the hash tag {@code {topic}}, so each
 * Lua script touches a single Redis Cluster slot. The layout (documented in docs/wire-format.md):
 *
 * <pre>
 * {prefix}:{topic}:stream             the topic's stream
 * {prefix}:{topic}:dead               its dead-letter stream
 * {prefix}:{topic}:dead:replayed      hash: dead letter id -> stream id it was replayed as, and
 *                                     "{dead letter id}:token" -> token of the call that replayed it
 * {prefix}:{topic}:dead:call:{token}  string, expires: what one dead-letter move did (dead letter id or
 *                                     "trimmed"), so that the same call sent again answers the same
 * {prefix}:{topic}:heartbeats:{group} sorted set: consumer -> last heartbeat, epoch ms (Redis clock)
 * {prefix}:topics                     set of topic names, for the inspector
 * </pre>
 */
public final class Keys {

    private final String prefix;

    public Keys(String prefix) {
        this.prefix = prefix;
    }

    public String stream(String topic) {
        return tagged(topic) + ":stream";
    }

    public String deadLetters(String topic) {
        return tagged(topic) + ":dead";
    }

    public String replayed(String topic) {
        return tagged(topic) + ":dead:replayed";
    }

    /** The record of one dead-letter move, by the token of its call. */
    public String deadLetterCall(String topic, String token) {
        return tagged(topic) + ":dead:call:" + token;
    }

    /** The field of the replay record that holds the token of the call that replayed a dead letter. */
    public static String replayTokenField(String deadLetterId) {
        return deadLetterId + ":token";
    }

    public String heartbeats(String topic, String group) {
        return tagged(topic) + ":heartbeats:" + group;
    }

    public String topics() {
        return prefix + ":topics";
    }

    private String tagged(String topic) {
        return prefix + ":{" + topic + "}";
    }

    /** Topic names become part of a hash tag: no braces, no whitespace, not empty, at most 200 chars. */
    public static String checkTopic(String topic) {
        checkName("topic", topic);
        if (topic.indexOf('{') >= 0 || topic.indexOf('}') >= 0) {
            throw new IllegalArgumentException("topic must not contain braces: '" + topic + "'");
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
