package dev.runbus;

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
}
