package dev.runbus;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** Publishes messages to topics. Thread-safe; obtained from {@link Bus#publisher()}. */
public interface Publisher {

    /**
     * Appends one message to the topic's stream (XADD) and returns its id: the stream id, or on a topic of several
     * partitions the stream id and the partition, as in {@code 1700000000000-0@3}. On such a topic a message with
     * a {@link Message#key() key} goes to the key's partition ({@link Partitioner}), one without to the next
     * partition in turn.
     */
    String publish(String topic, Message message);

    /** Publishes {@code message} with {@code key} as its key: see {@link #publish(String, Message)}. */
    default String publish(String topic, String key, Message message) {
        return publish(topic, message.withKey(key));
    }

    /**
     * Appends many messages, pipelined: all XADDs are sent before any reply is awaited. Returns the ids (as
     * {@link #publish(String, Message)} does) in the order of {@code messages}. If Redis fails part-way, some messages may have been appended;
     * the exception says how many are known to have been.
     */
    List<String> publishAll(String topic, List<Message> messages);

    /**
     * Schedules {@code message} to be appended to the topic's stream {@code delay} from now, now being the Redis
     * server's clock when Redis receives the call: the publisher's clock plays no part, so a publisher whose clock
     * is off makes entries neither early nor late. The entry waits in the delay set of the partition the message
     * goes to (its key's partition, as for {@link #publish(String, Message)}) and is moved into that partition's
     * stream when due, by every bus subscribed to the topic (docs/architecture.md, "Delays and retries", gives the
     * bound). Millisecond resolution. Returns the scheduled entry's id, for {@link Scheduled#cancel}; on a topic of
     * several partitions qualified with the partition ({@code id@3}). The message gets a new stream id when it is
     * moved; its {@link Message#id()} stays.
     *
     * @throws IllegalArgumentException when {@code delay} is negative
     */
    String publish(String topic, Message message, Duration delay);

    /**
     * Like {@link #publish(String, Message, Duration)}, due at {@code dueAt} as the Redis server's clock tells time
     * (an instant already past on that clock is due at once).
     */
    String publishAt(String topic, Message message, Instant dueAt);
}
