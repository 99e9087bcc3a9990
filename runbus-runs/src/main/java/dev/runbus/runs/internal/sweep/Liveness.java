package dev.runbus.runs.internal.sweep;

import dev.runbus.Inspector;
import dev.runbus.Partitioner;
import dev.runbus.RunbusException;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.RunsConfig;
import dev.runbus.runs.internal.worker.StreamIds;
import java.util.ArrayList;
import java.util.List;

/**
 * What Redis knows about the deliveries of the workers' group, read once per sweep: whether a run the
 * sweeper found has a live delivery. Only a group (or stream) that is gone means "nothing is live"; any other
 * failure to ask Redis is thrown, so that the sweep republishes nothing rather than runs that may be
 * executing.
 *
 * <p>A pending run's trigger is looked for partition by partition: in its user's partition when triggers are
 * keyed by user (ordered runs), else in any partition (they go round the partitions). Times of different
 * partitions are never compared with each other.
 */
final class Liveness {

    /** Tolerated difference between the PostgreSQL and Redis clocks when comparing times with stream ids. */
    static final long CLOCK_MARGIN_MILLIS = 1000;

    /** Per partition: the time of its newest entry and of the newest delivered to the group; -1 for none. */
    private record Times(long lastPublishedMillis, long lastDeliveredMillis) {
    }

    private final Inspector inspector;
    private final RunsConfig config;
    private final boolean groupExists;
    private final List<Times> partitions;

    private Liveness(Inspector inspector, RunsConfig config, boolean groupExists, List<Times> partitions) {
        this.inspector = inspector;
        this.config = config;
        this.groupExists = groupExists;
        this.partitions = partitions;
    }

    static Liveness read(Inspector inspector, RunsConfig config) {
        boolean exists = inspector.groups(config.topic()).stream().anyMatch(g -> g.name().equals(config.group()));
        List<Times> times = new ArrayList<>();
        for (Inspector.PartitionInfo p : inspector.partitions(config.topic(), config.group())) {
            times.add(new Times(millisOf(p.lastId()), millisOf(p.lastDeliveredId())));
        }
        return new Liveness(inspector, config, exists, times);
    }

    /** @throws RunbusException when Redis cannot tell (a timeout, a lost connection): the sweep must stop */
    boolean isLive(SweeperStore.Candidate cand) {
        // A trigger with a flow key may wait outside the stream for a slot of its key or its turn (parked, or parked
        // again after a takeover), where nothing below sees it: while any entry of its key waits, the run is taken
        // to be among them. It enters the stream in its turn; if it was lost, a sweep after its key drained finds it.
        String flowKey = config.triggerFlowKey(cand.flowKey());
        if (flowKey != null && inspector.flowWaiting(config.topic(), flowKey) > 0) {
            return true;
        }
        if (cand.status() == RunStatus.RUNNING && cand.streamId() != null) {
            if (groupExists && isPending(cand.streamId())) {
                return true;
            }
            // Its failed attempt was acked and a copy scheduled (a retry policy): moved into the stream at about
            // next_attempt_at, the copy is live while it waits there unread, like a pending run's trigger.
            return cand.nextAttemptAt() != null && groupExists
                    && partitions.stream().anyMatch(t -> waiting(t, cand.nextAttemptAt().toEpochMilli()
                    - CLOCK_MARGIN_MILLIS));
        }
        // Pending: its trigger (published at about updatedAt) is live if a partition it can be in has entries from
        // then on and the group has not delivered that far there yet.
        long since = cand.updatedAt().toEpochMilli() - CLOCK_MARGIN_MILLIS;
        if (config.ordered() && partitions.size() > 1 && cand.userId() != null) {
            return waiting(partitions.get(Partitioner.partitionOf(cand.userId(), partitions.size())), since);
        }
        return partitions.stream().anyMatch(t -> waiting(t, since));
    }

    private static boolean waiting(Times t, long since) {
        return t.lastPublishedMillis() >= since && t.lastDeliveredMillis() < since;
    }

    private boolean isPending(String streamId) {
        try {
            return inspector.pendingEntry(config.topic(), config.group(), streamId).isPresent();
        } catch (RunbusException e) {
            if (isNoGroup(e)) { // the stream or the group vanished since read (Redis lost its data): nothing is live
                return false;
            }
            throw e;
        }
    }

    /**
     * XPENDING on a stream or group that does not exist fails with Redis's NOGROUP error ("NOGROUP No such key
     * '…' or consumer group '…'"); the inspector passes it on as the cause of a RunbusException.
     */
    static boolean isNoGroup(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = t.getMessage();
            if (m != null && m.startsWith("NOGROUP ")) {
                return true;
            }
        }
        return false;
    }

    private static long millisOf(String streamId) {
        return streamId == null ? -1 : StreamIds.millis(streamId);
    }
}
