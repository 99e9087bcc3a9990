package dev.runbus;

import java.util.List;

/** A read-only view of topics, groups, consumers and pending entries, for operators and tools. */
public interface Inspector {

    /** Every topic this key prefix has seen published to or subscribed to, sorted by name. */
    List<StreamInfo> streams();

    /** One topic's stream, or empty when it does not exist. */
    java.util.Optional<StreamInfo> stream(String topic);

    List<GroupInfo> groups(String topic);

    List<ConsumerInfo> consumers(String topic, String group);

    /** Pending entries of a group, oldest first, at most {@code limit}. */
    List<PendingEntry> pending(String topic, String group, int limit);

    /** The pending entry with this stream id, or empty when it is not pending (acked, never delivered, gone). */
    java.util.Optional<PendingEntry> pendingEntry(String topic, String group, String streamId);

    /**
     * The partitions of a topic as its group sees them, by partition number: one for a plain topic. The partition
     * count is the one recorded in Redis.
     */
    List<PartitionInfo> partitions(String topic, String group);

    /**
     * @param partition     partition number, from 0
     * @param streamKey     the partition's stream
     * @param length        entries in the partition's stream
     * @param pending       entries of the partition delivered to the group and not acknowledged
     * @param lag           entries not yet delivered to the group; -1 when Redis cannot tell
     * @param owner         ordered groups: the consumer holding the partition's lease; null when none does
     *                      (unordered groups never have one)
     * @param fencingToken  the lease's fencing token; 0 without an owner
     * @param leaseAgeMillis how long ago the owner acquired the lease; -1 without an owner
     * @param leaseExpiresInMillis how long the lease lasts unless renewed; -1 without an owner
     */
    record PartitionInfo(int partition, String streamKey, long length, long pending, long lag, String owner,
                         long fencingToken, long leaseAgeMillis, long leaseExpiresInMillis) {
    }

    /**
     * @param topic        topic name
     * @param length       entries in the stream
     * @param firstId      oldest entry id, or null when empty
     * @param lastId       newest entry id ever added, or null
     * @param groups       number of consumer groups
     * @param deadLetters  entries in the dead-letter stream
     */
    record StreamInfo(String topic, long length, String firstId, String lastId, int groups, long deadLetters) {
    }

    /**
     * @param lag entries not yet delivered to the group; -1 when Redis cannot tell (Redis 6.2, or after
     *            deletions)
     */
    record GroupInfo(String name, int consumers, long pending, String lastDeliveredId, long lag) {
    }

    /**
     * @param idleMillis       since the consumer last read or claimed
     * @param lastHeartbeatAt  epoch millis of its last heartbeat, -1 when it has none (another client's
     *                         consumer, or one that closed cleanly: a close removes the heartbeat)
     * @param alive            heartbeat younger than {@code consumerDeadAfter}; without a heartbeat, idle for
     *                         less than that
     */
    record ConsumerInfo(String name, long pending, long idleMillis, long lastHeartbeatAt, boolean alive) {
    }

    record PendingEntry(String streamId, String consumer, long deliveries, long idleMillis) {
    }
}
