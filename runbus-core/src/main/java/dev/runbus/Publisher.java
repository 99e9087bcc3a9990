package dev.runbus;

import java.util.List;

/** Publishes messages to topics. Thread-safe; obtained from {@link Bus#publisher()}. */
public interface Publisher {

    /** Appends one message to the topic's stream (XADD) and returns its stream id. */
    String publish(String topic, Message message);

    /**
     * Appends many messages, pipelined: all XADDs are sent before any reply is awaited. Returns the stream
     * ids in the order of {@code messages}. If Redis fails part-way, some messages may have been appended;
     * the exception says how many are known to have been.
     */
    List<String> publishAll(String topic, List<Message> messages);
}
