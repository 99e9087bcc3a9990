package dev.runbus;

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

    private final String id;
    private final String type;
    private final byte[] payload;
    private final Map<String, String> headers;
    private final Instant publishedAt;
    private final String key;

    private Message(String id, String type, byte[] payload, Map<String, String> headers, Instant publishedAt,
                    String key) {
        this.id = id;
        this.key = key;
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
        return new Message(id, type, payload, headers, publishedAt, checkKey(key));
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
                && headers.equals(m.headers) && publishedAt.equals(m.publishedAt) && Objects.equals(key, m.key);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, type, Arrays.hashCode(payload), headers, publishedAt, key);
    }

    @Override
    public String toString() {
        return "Message[id=" + id + ", type=" + type + ", payload=" + payload.length + " bytes, headers=" + headers
                + ", publishedAt=" + publishedAt + (key == null ? "" : ", key=" + key) + "]";
    }

    /** Builds a {@link Message}; id, headers and publish time are optional. */
    public static final class Builder {
        private String id;
        private final String type;
        private final byte[] payload;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private Instant publishedAt;
        private String key;

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
            return new Message(id == null ? UUID.randomUUID().toString() : id, type, payload,
                    Collections.unmodifiableMap(new LinkedHashMap<>(headers)),
                    (publishedAt == null ? Instant.now() : publishedAt).truncatedTo(ChronoUnit.MILLIS), key);
        }
    }

    private static String checkKey(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty() || key.length() > 1000) {
            throw new IllegalArgumentException("a message key has 1 to 1000 characters, got " + key.length());
        }
        return key;
    }
}
