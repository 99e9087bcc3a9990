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
    /**
     * At most this many entries are read per place and sweep to find a trigger by its run's id (a partition's pending
     * list, its undelivered entries, a flow key's waiting ones); with more there, a run is taken to be among them.
     */
    static final int MAX_IDS_READ = 5_000;

    /**
     * Per partition: the time of its newest entry, of the newest delivered to the group and of the newest in the
     * group's pending list (-1 for none), and whether some entry is not delivered yet.
     */
    private record Times(long lastPublishedMillis, long lastDeliveredMillis, long lastPendingMillis,
                         boolean undelivered) {
    }

    private final Inspector inspector;
    private final RunsConfig config;
    private final boolean groupExists;
    private final List<Times> partitions;
    /**
     * Per partition, once read: the run ids of the triggers in the group's pending list from a time on (null when
     * there were too many); read again for a candidate that asks from an earlier time.
     */
    private final java.util.Map<Integer, PendingTriggers> pendingTriggers = new java.util.HashMap<>();
    /** Per partition and per flow key, once read in a sweep: for triggers with a flow key. */
    private final java.util.Map<Integer, Inspector.MessageIds> undelivered = new java.util.HashMap<>();
    private final java.util.Map<String, Inspector.MessageIds> flowWaiting = new java.util.HashMap<>();

    private record PendingTriggers(long fromMillis, java.util.Set<String> runIds) {
    }

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
            boolean undelivered = p.lastId() != null
                    && (p.lastDeliveredId() == null || StreamIds.compare(p.lastId(), p.lastDeliveredId()) > 0);
            times.add(new Times(millisOf(p.lastId()), millisOf(p.lastDeliveredId()), millisOf(p.lastPendingId()),
                    undelivered));
        }
        return new Liveness(inspector, config, exists, times);
    }

    /** @throws RunbusException when Redis cannot tell (a timeout, a lost connection): the sweep must stop */
    boolean isLive(SweeperStore.Candidate cand) {
        boolean running = cand.status() == RunStatus.RUNNING && cand.streamId() != null;
        if (running && groupExists && isPending(cand.streamId())) {
            return true;
        }
        String flowKey = config.triggerFlowKey(cand.flowKey());
        if (flowKey != null) {
            // Pending, or running with its retry copy due: the trigger (or copy) may be on its way.
            return (!running || cand.nextAttemptAt() != null) && flowTriggerOnItsWay(cand, flowKey);
        }
        if (running) {
            // Its failed attempt was acked and a copy scheduled (a retry policy): moved into the stream at about
            // next_attempt_at, the copy is live while it waits there unread or unstarted, like a pending run's trigger.
            return cand.nextAttemptAt() != null && groupExists
                    && anyPartitionHolds(cand, cand.nextAttemptAt().toEpochMilli() - CLOCK_MARGIN_MILLIS, true);
        }
        // Pending: its trigger (published at about updatedAt) is live if a partition it can be in has, from then on,
        // an entry the group has not been delivered or has not acknowledged yet: the trigger may be that entry.
        return anyPartitionHolds(cand, cand.updatedAt().toEpochMilli() - CLOCK_MARGIN_MILLIS, groupExists);
    }

    /**
     * A trigger with a flow key gets its stream id when it is let in, any time after its run's {@code updated_at}, so
     * time says nothing of it: it is looked for by its run's id where it can be, in the order it moves (waiting
     * outside the stream for its key's slot or turn, then in the stream not delivered yet, then in the group's pending
     * list), so that one moving on between two reads is found at the next. A read with more than it may look at
     * takes the run to be there.
     */
    private boolean flowTriggerOnItsWay(SweeperStore.Candidate cand, String flowKey) {
        String runId = cand.runId().toString();
        Inspector.MessageIds waiting = flowWaiting.computeIfAbsent(flowKey,
                k -> inspector.flowWaitingMessageIds(config.topic(), k, MAX_IDS_READ));
        if (holdsRun(waiting, runId)) {
            return true;
        }
        int p = Partitioner.partitionOf(flowKey, partitions.size());
        Inspector.MessageIds undelivered = this.undelivered.computeIfAbsent(p,
                part -> inspector.undeliveredMessageIds(config.topic(), config.group(), part, MAX_IDS_READ));
        if (holdsRun(undelivered, runId)) {
            return true;
        }
        return groupExists && pendingTriggers(p, 0).test(runId);
    }

    private static boolean holdsRun(Inspector.MessageIds ids, String runId) {
        return !ids.complete() || ids.ids().contains(runId);
    }

    /**
     * Whether a partition the run's trigger can be in may hold it unprocessed: undelivered there (entries from
     * {@code since} on that the group was not delivered), or, when {@code inPendingList}, delivered and not
     * acknowledged (in the group's pending list, read from {@code since} on).
     */
    private boolean anyPartitionHolds(SweeperStore.Candidate cand, long since, boolean inPendingList) {
        if (config.ordered() && partitions.size() > 1 && cand.userId() != null) {
            int p = Partitioner.partitionOf(cand.userId(), partitions.size());
            return holds(p, cand, since, inPendingList);
        }
        for (int p = 0; p < partitions.size(); p++) {
            if (holds(p, cand, since, inPendingList)) {
                return true;
            }
        }
        return false;
    }

    private boolean holds(int p, SweeperStore.Candidate cand, long since, boolean inPendingList) {
        if (waiting(partitions.get(p), since)) {
            return true;
        }
        if (!inPendingList || partitions.get(p).lastPendingMillis() < since) {
            return false;
        }
        // Delivered from then on and not acknowledged: a consumer reads up to its batch ahead of its handlers, so a
        // backlog's triggers are delivered long before their runs start (a run that started is RUNNING, and not
        // asked about here). Taken for lost there, a trigger would be published again and its run would run twice.
        return pendingTriggers(p, since).test(cand.runId().toString());
    }

    /**
     * The run ids of the triggers in partition {@code p}'s pending list from {@code since} on, read once per sweep
     * (again for an earlier {@code since}); every run id when there are more than may be read.
     */
    private java.util.function.Predicate<String> pendingTriggers(int p, long since) {
        PendingTriggers held = pendingTriggers.get(p);
        if (held == null || held.fromMillis() > since) {
            Inspector.MessageIds ids;
            try {
                ids = inspector.pendingMessageIds(config.topic(), config.group(), p, since, MAX_IDS_READ);
            } catch (RunbusException e) {
                if (!isNoGroup(e)) {
                    throw e;
                }
                ids = new Inspector.MessageIds(List.of(), true); // the group vanished since read: nothing pending
            }
            held = new PendingTriggers(since, ids.complete() ? new java.util.HashSet<>(ids.ids()) : null);
            pendingTriggers.put(p, held);
        }
        java.util.Set<String> runIds = held.runIds();
        return runIds == null ? id -> true : runIds::contains;
    }

    /**
     * Whether an entry published from {@code since} on may still wait undelivered in this partition: the partition
     * has entries the group was not delivered yet, the newest from {@code since} on, and the group was delivered
     * none from {@code since} plus twice the clock margin on (the trigger was published by then, on either clock):
     * a lost trigger is found once the group read past its time.
     */
    private static boolean waiting(Times t, long since) {
        return t.undelivered() && t.lastPublishedMillis() >= since
                && t.lastDeliveredMillis() < since + 2 * CLOCK_MARGIN_MILLIS;
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
