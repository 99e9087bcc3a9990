package dev.runbus;

import java.time.Duration;
import java.util.List;

/**
 * Notified of what happens to entries outside the happy path. Called on the bus's own threads
 * ({@link #onConsumerNameInUse} on the thread that subscribes): implementations must be quick and must not
 * block or do I/O (hand work to a queue instead).
 * An exception thrown by a listener is logged and otherwise ignored.
 */
public interface BusListener {

    /** A listener that does nothing. */
    BusListener NONE = new BusListener() {
    };

    /** An entry was moved to the dead-letter stream and acknowledged on its own stream. */
    default void onDeadLetter(DeadLetter deadLetter) {
    }

    /**
     * A handler failed. {@code outcome} is {@link Outcome#RETRY} when the entry will be delivered again (when the
     * subscription's {@link SubscribeOptions#retryPolicy() retry policy} says), {@link Outcome#DEAD_LETTER} when this
     * was the last allowed delivery, and {@link Outcome#ACK} with {@link AckMode#BEFORE_WORK}, whose entry was
     * acknowledged before the handler ran.
     */
    default void onHandlerFailure(Delivery delivery, Throwable failure, Outcome outcome) {
    }

    /**
     * Entries that were trimmed or deleted from the stream while still pending; they were acknowledged
     * so that nobody tries them again. Their content is gone.
     */
    default void onTrimmedWhilePending(String topic, String group, List<String> streamIds) {
    }

    /**
     * A consumer still running a handler found that its entries were taken over by another consumer
     * (its claim expired, for example after a long pause). The other consumer may run them too.
     */
    default void onClaimLost(String topic, String group, String consumer, List<String> streamIds) {
    }

    /** The janitor deleted a dead consumer whose pending list was empty. */
    default void onConsumerDeleted(String topic, String group, String consumer) {
    }

    /**
     * A subscription started under a consumer name whose heartbeat in the group was fresher than two heartbeat
     * intervals: another live process seems to use the same name (or this one restarted right after a
     * crash). Two processes with one consumer name share one pending list, so each one's start delivers
     * again the entries the other is working on. Give every process its own consumer name. The
     * subscription starts anyway.
     *
     * @param sinceHeartbeat how long before the subscription started the name's last heartbeat was written
     */
    default void onConsumerNameInUse(String topic, String group, String consumer, Duration sinceHeartbeat) {
    }

    /**
     * Retention trimmed {@code entries} entries from the streams of {@code topic} (all its partitions, one round):
     * entries every consumer group had acknowledged and older than the retention age.
     */
    default void onRetentionTrimmed(String topic, long entries) {
    }

    /** Dead-letter retention trimmed {@code entries} dead letters of {@code topic} older than its age. */
    default void onDeadLettersTrimmed(String topic, long entries) {
    }

    /**
     * The dead-letter depth of {@code topic} (all its partitions) went from zero to more: the moment to alert
     * someone. Decided in Redis, so one process of all those sharing the topic hears it per transition, the one
     * whose dead letter (or whose purge that left some behind) made it; the depth falls back to zero when every dead
     * letter is purged or trimmed, and the next one raises it again. Topics that had dead letters before this
     * version raise it once more with their next dead letter. Called on the thread that moved the dead letter:
     * keep it short.
     */
    default void onDeadLetterDepthRaised(String topic) {
    }

    /** A background loop failed (Redis unreachable, for example); it keeps running and tries again. */
    default void onLoopError(String loop, Throwable error) {
    }
}
