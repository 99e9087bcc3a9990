package dev.runbus;

import java.time.Instant;
import java.util.Optional;

/**
 * An entry isolated in a topic's dead-letter stream.
 *
 * @param id               the id of the dead letter in the dead-letter stream; for a topic of several
 *                         partitions, qualified with the partition ({@code 1700000000000-0@3})
 * @param topic            the topic the entry was published to
 * @param originalStreamId its id in the topic's stream; qualified with the partition likewise
 * @param group            the group that gave up on it
 * @param consumer         the consumer that held it last
 * @param deliveries       how many times it was delivered
 * @param reason           why: the handler's exception (class and message) or "abandoned N times, last owner X"
 * @param deadAt           when it was moved
 * @param message          the original message, decoded from its original fields
 * @param replayedAs       the stream id the dead letter was replayed as, if it was (qualified likewise)
 *
 * <p>An entry another tool wrote into the dead-letter stream is read without failing: a text field it lacks
 * is empty, a missing or malformed delivery count is 0, a missing or malformed time is when the dead letter
 * was added to its stream (docs/wire-format.md).
 */
public record DeadLetter(String id, String topic, String originalStreamId, String group, String consumer,
                         long deliveries, String reason, Instant deadAt, Message message,
                         Optional<String> replayedAs) {
}
