package dev.runbus;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * What a producer publishes: an application id, a type, opaque payload bytes, string headers and the
 * publish time (millisecond precision, as on the wire). Immutable; the payload array is copied in and out.
 *
 * <p>The id is the application's name for the message (by default a random UUID); the Redis stream
 * id that {@link Publisher#publish} returns names one stream entry. A message replayed from the
 * dead-letter stream keeps its id and gets a new stream id.
 */
public final class Message {

    /** Headers per message; a dead letter must be able to carry every field of the original entry. */
    public static final int MAX_HEADERS = 256;

    /** A flow key is at most this many UTF-8 bytes: what a publisher may make Redis keep per waiting entry. */
    public static final int MAX_FLOW_KEY_BYTES = 256;

    /** The least urgent {@link #priority()}. */
    public static final int MIN_PRIORITY = 0;
    /** The most urgent {@link #priority()}. */
    public static final int MAX_PRIORITY = 9;
    /** The priority of a message that names none: the middle, as in JMS. */
    public static final int DEFAULT_PRIORITY = 4;
    /** The largest {@link #cost()}. */
    public static final int MAX_COST = 1_000_000;

    private final String id;
    private final String type;
    private final byte[] payload;
    private final Map<String, String> headers;
    private final Instant publishedAt;
    private final String key;
    private final String flowKey;
    private final int priority;
    private final int cost;
    private final String flowSubKey;

    private Message(String id, String type, byte[] payload, Map<String, String> headers, Instant publishedAt,
                    String key, String flowKey, int priority, int cost, String flowSubKey) {
        this.flowSubKey = flowSubKey;
        this.id = id;
        this.key = key;
        this.flowKey = flowKey;
        this.priority = priority;
        this.cost = cost;
        this.type = type;
        this.payload = payload;
        this.headers = headers;
        this.publishedAt = publishedAt;
    }

    /** A message with a random id, no headers, published now. */
    public static Message of(String type, byte[] payload) {
        return builder(type, payload).build();
    }

    public static Builder builder(String type, byte[] payload) {
        return new Builder(type, payload);
    }

    public String id() {
        return id;
    }

    public String type() {
        return type;
    }

    /** A copy of the payload. */
    public byte[] payload() {
        return payload.clone();
    }

    /** Unmodifiable, in insertion order. */
    public Map<String, String> headers() {
        return headers;
    }

    public Instant publishedAt() {
        return publishedAt;
    }

    /**
     * The message key, or null when it has none. On a topic with several partitions the key chooses the
     * partition ({@link Partitioner}), so that messages of one key keep their order for an ordered consumer.
     */
    public String key() {
        return key;
    }

    /** This message with {@code key} as its key. */
    public Message withKey(String key) {
        return new Message(id, type, payload, headers, publishedAt, checkKey(key), flowKey, priority, cost, flowSubKey);
    }

    /**
     * The flow key (the tenant, docs/flow-control.md), or null when it has none. On a topic whose subscription sets
     * {@link SubscribeOptions#flowCap() a flow cap}, at most that many entries of one flow key run at once; the others
     * wait outside the stream, undelivered. The flow key also chooses the partition, in place of the key.
     */
    public String flowKey() {
        return flowKey;
    }

    /** This message with {@code flowKey} as its flow key (see {@link #flowKey()}). */
    public Message withFlowKey(String flowKey) {
        return new Message(id, type, payload, headers, publishedAt, key, checkFlowKey(flowKey), priority, cost, flowSubKey);
    }

    /**
     * How urgent the message is among the waiting messages of its flow key, from {@value #MIN_PRIORITY} to
     * {@value #MAX_PRIORITY} (most urgent; default {@value #DEFAULT_PRIORITY}). When its key's slots are taken, the
     * key's next message is its most urgent waiting one, unless a less urgent one has waited longer than the
     * priorities between them are worth ({@link SubscribeOptions#flowPriorityAging()} each), so that every priority
     * is served within a bound (docs/flow-control.md, "Priorities"). Only a message with a flow key has one; a
     * message that does not wait runs as it comes.
     */
    public int priority() {
        return priority;
    }

    /** This message with {@code priority} (see {@link #priority()}); it must have a flow key. */
    public Message withPriority(int priority) {
        return new Message(id, type, payload, headers, publishedAt, key, flowKey,
                checkPriority(priority, flowKey), cost, flowSubKey);
    }

    /**
     * What the message counts for under flow control's rates and fair shares, 1 to {@value #MAX_COST} (default 1):
     * its admission takes {@code cost} of its key's and its topic's rate ({@link SubscribeOptions#flowRate()},
     * {@link SubscribeOptions#flowTopicRate()}), and moves its key's fair-share turn as far as {@code cost} messages
     * of 1 would (docs/flow-control.md, "Costs"). It still takes one slot of a cap. Only a message with a flow key
     * has one.
     */
    public int cost() {
        return cost;
    }

    /** This message with {@code cost} (see {@link #cost()}); it must have a flow key. */
    public Message withCost(int cost) {
        return new Message(id, type, payload, headers, publishedAt, key, flowKey, priority,
                checkCost(cost, flowKey), flowSubKey);
    }

    /**
     * The flow sub-key (a conversation, a user of the tenant; docs/flow-control.md), or null when it has none. The
     * waiting messages of one flow key take turns by sub-key (start-time fair queueing): a sub-key with many waiting
     * gets no more turns than one with a few, so one conversation's burst does not hold up the tenant's others. The
     * tenant's share of the topic is its flow key's, however many sub-keys it spreads its work over.
     */
    public String flowSubKey() {
        return flowSubKey;
    }

    /** This message with {@code flowSubKey} (see {@link #flowSubKey()}); it must have a flow key. */
    public Message withFlowSubKey(String flowSubKey) {
        return new Message(id, type, payload, headers, publishedAt, key, flowKey, priority, cost,
                checkFlowSubKey(flowSubKey, flowKey));
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Message)) {
            return false;
        }
        Message m = (Message) o;
        return id.equals(m.id) && type.equals(m.type) && Arrays.equals(payload, m.payload)
                && headers.equals(m.headers) && publishedAt.equals(m.publishedAt) && Objects.equals(key, m.key)
                && Objects.equals(flowKey, m.flowKey) && priority == m.priority && cost == m.cost
                && Objects.equals(flowSubKey, m.flowSubKey);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, type, Arrays.hashCode(payload), headers, publishedAt, key, flowKey, priority, cost,
                flowSubKey);
    }

    @Override
    public String toString() {
        return "Message[id=" + id + ", type=" + type + ", payload=" + payload.length + " bytes, headers=" + headers
                + ", publishedAt=" + publishedAt + (key == null ? "" : ", key=" + key)
                + (flowKey == null ? "" : ", flowKey=" + flowKey)
                + (priority == DEFAULT_PRIORITY ? "" : ", priority=" + priority)
                + (cost == 1 ? "" : ", cost=" + cost) + (flowSubKey == null ? "" : ", flowSubKey=" + flowSubKey) + "]";
    }

    /** Builds a {@link Message}; id, headers and publish time are optional. */
    public static final class Builder {
        private String id;
        private final String type;
        private final byte[] payload;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private Instant publishedAt;
        private String key;
        private String flowKey;
        private int priority = DEFAULT_PRIORITY;
        private int cost = 1;
        private String flowSubKey;

        private Builder(String type, byte[] payload) {
            this.type = Objects.requireNonNull(type, "type");
            this.payload = Objects.requireNonNull(payload, "payload").clone();
        }

        public Builder id(String id) {
            this.id = Objects.requireNonNull(id, "id");
            return this;
        }

        /**
         * Adds a header. Names are non-empty and free of whitespace; values may be any string.
         */
        public Builder header(String name, String value) {
            Objects.requireNonNull(name, "header name");
            Objects.requireNonNull(value, "value of header " + name);
            if (name.isEmpty() || name.chars().anyMatch(Character::isWhitespace)) {
                throw new IllegalArgumentException("header name must be non-empty without whitespace: '" + name + "'");
            }
            headers.put(name, value);
            return this;
        }

        public Builder headers(Map<String, String> all) {
            all.forEach(this::header);
            return this;
        }

        /** The message key (see {@link Message#key()}): non-empty, at most 1,000 characters. */
        public Builder key(String key) {
            this.key = checkKey(key);
            return this;
        }

        /**
         * The flow key (see {@link Message#flowKey()}): non-empty, at most {@value #MAX_FLOW_KEY_BYTES} UTF-8 bytes,
         * without NUL (U+0000).
         */
        public Builder flowKey(String flowKey) {
            this.flowKey = checkFlowKey(flowKey);
            return this;
        }

        /**
         * The priority (see {@link Message#priority()}): {@value #MIN_PRIORITY} to {@value #MAX_PRIORITY}, default
         * {@value #DEFAULT_PRIORITY}. Another than the default needs a {@link #flowKey flow key}: only waiting
         * messages are ordered.
         */
        public Builder priority(int priority) {
            this.priority = checkPriority(priority, "");
            return this;
        }

        /**
         * The cost (see {@link Message#cost()}): 1 to {@value #MAX_COST}, default 1. Another than 1 needs a
         * {@link #flowKey flow key}.
         */
        public Builder cost(int cost) {
            this.cost = checkCost(cost, "");
            return this;
        }

        /**
         * The flow sub-key (see {@link Message#flowSubKey()}): as a flow key, non-empty, at most
         * {@value #MAX_FLOW_KEY_BYTES} UTF-8 bytes, without NUL. It needs a {@link #flowKey flow key}.
         */
        public Builder flowSubKey(String flowSubKey) {
            this.flowSubKey = checkFlowSubKey(flowSubKey, "");
            return this;
        }

        public Builder publishedAt(Instant publishedAt) {
            this.publishedAt = Objects.requireNonNull(publishedAt, "publishedAt");
            return this;
        }

        public Message build() {
            if (headers.size() > MAX_HEADERS) {
                throw new IllegalArgumentException("a message has at most " + MAX_HEADERS + " headers, got "
                        + headers.size());
            }
            if (id != null && id.isEmpty()) {
                throw new IllegalArgumentException("message id must not be empty");
            }
            checkPriority(priority, flowKey);
            checkCost(cost, flowKey);
            if (flowSubKey != null) {
                checkFlowSubKey(flowSubKey, flowKey);
            }
            return new Message(id == null ? UUID.randomUUID().toString() : id, type, payload,
                    Collections.unmodifiableMap(new LinkedHashMap<>(headers)),
                    (publishedAt == null ? Instant.now() : publishedAt).truncatedTo(ChronoUnit.MILLIS), key,
                    flowKey, priority, cost, flowSubKey);
        }
    }

    /**
     * A flow sub-key as {@link Builder#flowSubKey} takes it, for a message whose flow key is {@code flowKey} (null:
     * none, refused; "": not known yet, checked when the message is built).
     */
    static String checkFlowSubKey(String flowSubKey, String flowKey) {
        Objects.requireNonNull(flowSubKey, "flowSubKey");
        if (flowKey == null) {
            throw new IllegalArgumentException("a flow sub-key needs a flow key: it orders the flow key's waiting"
                    + " messages");
        }
        try {
            return checkFlowKey(flowSubKey);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage().replace("a flow key", "a flow sub-key"));
        }
    }

    /**
     * A flow key as {@link Builder#flowKey} takes it. NUL is refused because Redis keeps a key's waiting entries
     * under members that start with the key and a NUL.
     */
    public static String checkFlowKey(String flowKey) {
        Objects.requireNonNull(flowKey, "flowKey");
        if (flowKey.isEmpty()) {
            throw new IllegalArgumentException("a flow key must not be empty");
        }
        if (flowKey.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("a flow key must not contain NUL (U+0000): " + flowKey.replace('\0', '?'));
        }
        int bytes = flowKey.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_FLOW_KEY_BYTES) {
            throw new IllegalArgumentException("a flow key has at most " + MAX_FLOW_KEY_BYTES + " UTF-8 bytes, got "
                    + bytes);
        }
        return flowKey;
    }

    /**
     * A priority as {@link Builder#priority} takes it, for a message whose flow key is {@code flowKey} (null: none,
     * and then only the default is taken).
     */
    private static int checkPriority(int priority, String flowKey) {
        if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
            throw new IllegalArgumentException("a priority is " + MIN_PRIORITY + " to " + MAX_PRIORITY + ", got "
                    + priority);
        }
        if (priority != DEFAULT_PRIORITY && flowKey == null) {
            throw new IllegalArgumentException("a priority orders the messages waiting for their flow key's slots:"
                    + " give the message a flow key too (docs/flow-control.md)");
        }
        return priority;
    }

    /** A cost as {@link Builder#cost} takes it, for a message whose flow key is {@code flowKey} (null: none). */
    private static int checkCost(int cost, String flowKey) {
        if (cost < 1 || cost > MAX_COST) {
            throw new IllegalArgumentException("a cost is 1 to " + MAX_COST + ", got " + cost);
        }
        if (cost != 1 && flowKey == null) {
            throw new IllegalArgumentException("a cost counts under flow control's rates and fair shares: give the "
                    + "message a flow key too (docs/flow-control.md)");
        }
        return cost;
    }

    private static String checkKey(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty() || key.length() > 1000) {
            throw new IllegalArgumentException("a message key has 1 to 1000 characters, got " + key.length());
        }
        return key;
    }
}
