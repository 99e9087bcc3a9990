package dev.runbus;

import java.time.Instant;
import java.util.List;

/**
 * The entries waiting in the delay sets of topics: scheduled by {@link Publisher#publish(String, Message,
 * java.time.Duration)} or {@link Publisher#publishAt}, or put there by a {@link RetryPolicy} after a failed attempt.
 * Obtained from {@link Bus#scheduled()}. A scheduled entry is appended to its topic's stream when it is due, by the
 * mover every bus runs for the topics it subscribes to.
 */
public interface Scheduled {

    /**
     * The scheduled entries of a topic, soonest first, at most {@code limit}; for a topic of several partitions,
     * those of all partitions merged by due time.
     *
     * @throws IllegalArgumentException for a bad topic name or a limit below 1
     */
    List<ScheduledEntry> list(String topic, int limit);

    /**
     * Removes a scheduled entry before it is due. Returns false when there is none with this id (never scheduled,
     * already moved into the stream, or cancelled before).
     *
     * @throws IllegalArgumentException for a bad topic name, or an id that does not name a partition of the topic
     */
    boolean cancel(String topic, String id);

    /** How many entries wait in the topic's delay sets (all partitions). */
    long count(String topic);

    /**
     * @param id       the scheduled entry's id, as {@link Publisher#publishAt} returned it (with {@code @partition}
     *                 on a topic of several partitions)
     * @param topic    its topic
     * @param dueAt    when it is due, on the Redis server's clock
     * @param attempts attempts already made at it (0 for a message published with a delay; n for a retry after n
     *                 failed attempts)
     * @param forGroup the only group that will handle it (a retry), or null for every group
     * @param message  the message
     */
    record ScheduledEntry(String id, String topic, Instant dueAt, long attempts, String forGroup, Message message) {
    }
}
