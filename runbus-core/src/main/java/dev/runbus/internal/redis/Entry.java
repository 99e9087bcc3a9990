package dev.runbus.internal.redis;

import java.util.Map;

/**
 * A stream entry as this consumer received it. Its stream id is only unique within its partition: stream ids of
 * different partitions can be equal, so whatever is kept by entry is kept by {@link #ref()}.
 *
 * @param partition     the partition whose stream holds it; 0 for a topic of one partition
 * @param streamId      its id in that stream (never partition-qualified)
 * @param previousOwner the consumer that held it before this delivery; "" when unknown or new
 * @param fresh         read as new ({@code XREADGROUP ... >}): never delivered before, so the pending list counts this
 *                      delivery as its first; false for entries re-read, claimed or taken back, and for those of a
 *                      read answered late, which this consumer holds later than their delivery
 */
public record Entry(int partition, String streamId, Map<String, byte[]> fields, long deliveries, String previousOwner,
                    boolean fresh) {

    /** An entry delivered before, or not known to be new. */
    public Entry(int partition, String streamId, Map<String, byte[]> fields, long deliveries, String previousOwner) {
        this(partition, streamId, fields, deliveries, previousOwner, false);
    }

    /** Names one entry of a topic, across partitions. */
    public record Ref(int partition, String streamId) {
    }

    public Ref ref() {
        return new Ref(partition, streamId);
    }
}
