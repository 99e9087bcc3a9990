package dev.runbus;

/**
 * One delivery of a stream entry to one consumer: what a {@link Handler} receives.
 *
 * @param message       the decoded message
 * @param topic         the topic it was published to
 * @param streamId      the id of the entry (what acks and dead letters refer to): its Redis stream id, and
 *                      for a topic of several partitions that id with its partition after an {@code @}, as
 *                      {@link Publisher#publish} returned it ({@code 1700000000000-0@3})
 * @param group         the consumer group
 * @param consumer      the consumer it is delivered to
 * @param deliveryCount how many times a handler of the group started on this entry, this delivery included: 1
 *                      on the first delivery. Not the pending entries list's (PEL) count, which also counts reads
 *                      and claims whose reply was lost and that no handler started on (docs/architecture.md, rule 13)
 * @param fencingToken  ordered consumption only: the fencing token of the partition lease this delivery runs
 *                      under, higher for every new owner of the partition; 0 otherwise. A handler whose effects
 *                      must never overlap with a later owner's (its process may pause past its lease while it
 *                      runs) passes the token to the system it writes to, which refuses writes with a token
 *                      lower than one it has seen
 * @param attempt       which attempt at the message this is, 1 for the first: the delivery count plus the
 *                      attempts made before a {@link RetryPolicy} put the message back into the stream as a new
 *                      entry (the entry's {@code attempts} field, docs/wire-format.md). Equal to
 *                      {@code deliveryCount} for an entry never rescheduled. The poison threshold
 *                      ({@code maxDeliveries}) counts this
 */
public record Delivery(Message message, String topic, String streamId, String group, String consumer,
                       long deliveryCount, long fencingToken, long attempt) {

    public Delivery {
        if (attempt < deliveryCount) {
            throw new IllegalArgumentException("attempt (" + attempt + ") must be at least the delivery count ("
                    + deliveryCount + ")");
        }
    }

    /** A delivery of an entry never rescheduled: its attempt is its delivery count. */
    public Delivery(Message message, String topic, String streamId, String group, String consumer,
                    long deliveryCount, long fencingToken) {
        this(message, topic, streamId, group, consumer, deliveryCount, fencingToken, deliveryCount);
    }

    /** A delivery outside ordered consumption (no fencing token) of an entry never rescheduled. */
    public Delivery(Message message, String topic, String streamId, String group, String consumer,
                    long deliveryCount) {
        this(message, topic, streamId, group, consumer, deliveryCount, 0);
    }

    /** True when this is not the first attempt: an earlier one failed or its consumer died. */
    public boolean isRedelivery() {
        return attempt > 1;
    }
}
