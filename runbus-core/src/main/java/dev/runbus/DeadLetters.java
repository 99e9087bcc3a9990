package dev.runbus;

import java.util.List;
import java.util.Optional;

/** The dead-letter stream of each topic: list, read, replay, purge. */
public interface DeadLetters {

    /**
     * Dead letters of a topic, oldest first, starting after {@code afterId} ({@code null} for the start),
     * at most {@code limit}.
     */
    List<DeadLetter> list(String topic, String afterId, int limit);

    Optional<DeadLetter> get(String topic, String deadLetterId);

    /** How many dead letters the topic holds (replayed ones included until purged). */
    long count(String topic);

    /**
     * Publishes the original fields of a dead letter back to the topic's stream, for the group that gave up
     * on it only (other groups acknowledge the replayed entry without running their handler), and records
     * the replay atomically so that it cannot happen twice by accident. Returns the new stream id.
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
