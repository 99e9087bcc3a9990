package dev.runbus;

import java.util.List;
import java.util.Optional;

/**
 * The dead-letter stream of each topic: list, read, replay, purge.
 *
 * <p>Each partition of a topic of several partitions has a dead-letter stream of its own; these methods take the
 * topic and cover all of them. The id of such a dead letter names its partition the way entry ids do
 * ({@code 1700000000000-0@3}: the dead letter's id in its partition's dead-letter stream, then the partition).
 * An id that does not name a partition of the topic as it must is refused with an
 * {@link IllegalArgumentException}. The partition count used is the one recorded in Redis.
 */
public interface DeadLetters {

    /**
     * Dead letters of a topic, oldest first, starting after {@code afterId} ({@code null} for the start),
     * at most {@code limit}. For a topic of several partitions, the partitions' dead letters merged by stream id,
     * then partition; "after" means after that (stream id, partition) pair, so the last id of one page is the
     * {@code afterId} of the next.
     */
    List<DeadLetter> list(String topic, String afterId, int limit);

    /** How many partitions the topic has, as recorded in Redis: 1 for a plain topic (or one not used yet). */
    int partitions(String topic);

    /**
     * The dead letters of one partition of a topic (0 for a plain topic), oldest first, starting after
     * {@code afterId} (an id of that partition, as this and {@link #list} hand them out; {@code null} for the
     * start), at most {@code limit}. The ids of one partition's dead letters only grow, in the order they were
     * added; the order of {@link #list} across partitions is by time, and partitions on different masters have
     * different clocks, so a dead letter can be added to one partition before an id {@link #list} already passed.
     * A reader that must see every dead letter once (a reconciliation) keeps one place per partition here.
     *
     * @throws IllegalArgumentException when the topic has no such partition, or {@code afterId} names another
     */
    List<DeadLetter> listPartition(String topic, int partition, String afterId, int limit);

    Optional<DeadLetter> get(String topic, String deadLetterId);

    /** How many dead letters the topic holds (replayed ones included until purged). */
    long count(String topic);

    /**
     * Publishes the original fields of a dead letter back to the topic's stream, for the group that gave up
     * on it only (other groups acknowledge the replayed entry without running their handler), and records
     * the replay atomically so that it cannot happen twice by accident. Returns the new stream id. A dead letter of
     * a topic of several partitions goes back to the partition it came from, and the id returned names it.
     *
     * @throws NoSuchDeadLetterException          if there is no such dead letter
     * @throws DeadLetterAlreadyReplayedException if it was replayed before
     */
    String replay(String topic, String deadLetterId);

    /** Deletes one dead letter; returns whether it existed. */
    boolean purge(String topic, String deadLetterId);

    /** Deletes every dead letter of the topic; returns how many there were. */
    long purgeAll(String topic);
}
