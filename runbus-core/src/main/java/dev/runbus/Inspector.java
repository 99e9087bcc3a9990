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
