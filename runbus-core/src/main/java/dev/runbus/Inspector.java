package dev.runbus;

import java.util.List;

/** A read-only view of topics, groups, consumers and pending entries, for operators and tools. */
public interface Inspector {

    /** Every topic this key prefix has seen published to or subscribed to, sorted by name. */
    List<StreamInfo> streams();

    /**
     * A page of {@link #streams()}: the topics after {@code afterTopic} by name ({@code null} for the first), at
     * most {@code limit}. Only the topics of the page are read, so that a listing of many topics can be taken in
     * bounded steps: the last topic of one page is the {@code afterTopic} of the next.
     *
     * @throws IllegalArgumentException for a limit below 1
     */
    List<StreamInfo> streams(String afterTopic, int limit);

    /**
     * One topic's stream, or empty when it does not exist. For a topic of several partitions, the figures of all
     * its partitions' streams (see {@link StreamInfo}); empty when none of them exists.
     */
    java.util.Optional<StreamInfo> stream(String topic);

    /** The groups of a topic; for a topic of several partitions, each group once, over all partitions. */
    List<GroupInfo> groups(String topic);

    List<ConsumerInfo> consumers(String topic, String group);

    /**
     * Pending entries of a group, oldest first, at most {@code limit}; for a topic of several partitions, those of
     * all partitions, ordered by stream id then partition, with partition-qualified ids.
     */
    List<PendingEntry> pending(String topic, String group, int limit);

    /**
     * The pending entry with this id, or empty when it is not pending (acked, never delivered, gone). For a topic
     * of several partitions the id names its partition ({@code 1700000000000-0@3}).
     *
     * @throws IllegalArgumentException if the id does not name a partition of the topic, or names one of a topic
     *                                  of one partition
     */
    java.util.Optional<PendingEntry> pendingEntry(String topic, String group, String streamId);

    /**
     * Message ids ({@link Message#id()}) read from one place, and whether they are all of it: {@code complete} is
     * false when there were more than the read's {@code max} (then {@code ids} holds the first ones).
     */
    record MessageIds(List<String> ids, boolean complete) {
    }

    /**
     * The messages of partition {@code partition} of {@code topic} in the pending list of {@code group} (delivered,
     * not acknowledged: running, or read and waiting for a handler) whose stream ids are from {@code fromMillis} on,
     * oldest first, at most {@code max}. Entries trimmed from the stream while pending are left out.
     */
    MessageIds pendingMessageIds(String topic, String group, int partition, long fromMillis, int max);

    /**
     * The messages of partition {@code partition} of {@code topic} not delivered to {@code group} yet (after its last
     * delivered id; all of them when the group does not exist), oldest first, at most {@code max}.
     */
    MessageIds undeliveredMessageIds(String topic, String group, int partition, int max);

    /**
     * The messages of one flow key waiting outside the streams of {@code topic} for a slot or their turn
     * (docs/flow-control.md), in their order, at most {@code max}.
     */
    MessageIds flowWaitingMessageIds(String topic, String flowKey, int max);

    /**
     * The partitions of a topic as its group sees them, by partition number: one for a plain topic. The partition
     * count is the one recorded in Redis.
     */
    List<PartitionInfo> partitions(String topic, String group);

    /**
     * A topic's flow-controlled work (docs/flow-control.md), summed over its partitions: zeros for a topic whose
     * messages carry no flow key.
     */
    FlowInfo flow(String topic);

    /**
     * The flow keys of {@code topic} that have messages waiting or slots held (docs/flow-control.md), by name, the
     * first {@code max} after {@code afterKey} (null: from the first), with their counts and their own limits. Reads
     * a few commands per key and partition: for an operator's page, not a loop.
     */
    List<FlowKeyInfo> flowKeys(String topic, String afterKey, int max);

    /**
     * How many messages of one flow key wait outside the streams of {@code topic} for a slot or their turn
     * (docs/flow-control.md): 0 for a key with none waiting.
     */
    long flowWaiting(String topic, String flowKey);

    /**
     * @param topic  topic name
     * @param parked messages waiting outside the stream for a free slot of their flow key (never read, no delivery
     *               count)
     * @param held   slots held: messages let into the stream and not yet given back (running, read and about to
     *               run, or taken by a consumer that died, until its slot expires and is reaped)
     * @param throttled flow keys that only their rate holds back ({@link SubscribeOptions#flowRate()}): they have
     *               waiting messages and a free slot, and wait for the time their rate lets the next one in
     */
    record FlowInfo(String topic, long parked, long held, long throttled) {
    }

    /**
     * One flow key of a topic.
     *
     * @param waiting       its messages waiting outside the stream for a slot or their turn
     * @param held          its slots held (messages let in and not given back yet)
     * @param cap           its own cap ({@link Bus#setFlowCap}); null: the group's
     * @param ratePerSecond its own rate, per second ({@link Bus#setFlowRate}); null: the group's; infinite: none (the
     *                      key is exempt from the group's)
     * @param burst         its own rate's burst; null with no rate of its own
     * @param weight        its own weight ({@link Bus#setFlowWeight}); null: 1
     */
    record FlowKeyInfo(String topic, String flowKey, long waiting, long held, Integer cap, Double ratePerSecond,
                       Integer burst, Double weight) {
    }

    /**
     * What retention keeps of a topic, by partition number: one for a plain topic. Reads only; trims nothing.
     */
    List<RetentionInfo> retention(String topic);

    /**
     * One partition's stream as retention sees it: it may trim the entries older than {@code neededFrom} (and
     * older than the retention age of the buses that run it).
     *
     * @param partition  partition number, from 0
     * @param streamKey  the partition's stream
     * @param length     entries in the stream
     * @param firstId    the stream id (plain) of its oldest entry; null when empty
     * @param neededFrom the oldest stream id some group still needs: the oldest of each group's oldest pending entry
     *                   and the entry after its last delivered one; null when the stream has no group (it is not
     *                   trimmed) or does not exist
     * @param heldBy     the group that needs {@code neededFrom}, the one holding retention back; null without groups
     */
    record RetentionInfo(int partition, String streamKey, long length, String firstId, String neededFrom,
                         String heldBy) {
    }

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
     * @param lastId        the stream id (plain, of this partition's stream) of its newest entry; null when empty
     * @param lastDeliveredId the stream id (plain) of the newest entry delivered to the group; null without the
     *                      group
     * @param lastPendingId the stream id (plain) of the newest entry in the group's pending list (delivered, not
     *                      acknowledged); null when it has none
     */
    record PartitionInfo(int partition, String streamKey, long length, long pending, long lag, String owner,
                         long fencingToken, long leaseAgeMillis, long leaseExpiresInMillis, String lastId,
                         String lastDeliveredId, String lastPendingId) {
    }

    /**
     * <p>For a topic of several partitions: the length and dead letters are summed over the partitions; the first
     * id is the oldest first entry of any partition and the last id the newest id any partition added (by time,
     * then partition), each qualified with the partition that holds it ({@code 1700000000000-0@3}), or null when
     * no partition has one; the groups are counted on the partition that has the most.
     *
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
     * For a topic of several partitions: consumers counted on the partition where the group has the most, pending
     * and lag summed (lag -1 when any partition's is unknown), the last delivered id the newest of any partition,
     * qualified with its partition.
     *
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
     *
     * <p>For a topic of several partitions, pending is summed over the partitions and idle is the shortest.
     */
    record ConsumerInfo(String name, long pending, long idleMillis, long lastHeartbeatAt, boolean alive) {
    }

    /** @param streamId the entry's id; qualified with its partition for a topic of several partitions */
    record PendingEntry(String streamId, String consumer, long deliveries, long idleMillis) {
    }
}
