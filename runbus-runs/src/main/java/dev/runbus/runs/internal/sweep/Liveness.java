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
     * How much later than its run's time a trigger may be published: after the commit of a group of up to 500 runs
     * (whose {@code updated_at} is when its transaction began), or a user's lock for ordered runs, or a delayed
     * run's move out of the delay set by a mover that was backing off. A trigger undelivered behind entries the
     * group was delivered up to this long after its run's time is still taken to be waiting; a lost one is found
     * once the group read past it.
     */
    static final long PUBLISH_LAG_MILLIS = 30_000;
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
    /** For triggers with a flow key, read by {@link #prepare}: per partition, and per flow key. */
    private final java.util.Map<Integer, Inspector.MessageIds> undelivered = new java.util.HashMap<>();
    private final java.util.Map<String, java.util.function.Predicate<String>> flowWaiting = new java.util.HashMap<>();

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
        // Pending: its trigger (published at about updatedAt, or moved in from the delay set at about next_attempt_at
        // for a delayed run) is live if a partition it can be in has, from then on, an entry the group has not been
        // delivered or has not acknowledged yet: the trigger may be that entry.
        long at = cand.updatedAt().toEpochMilli();
        if (cand.nextAttemptAt() != null) {
            at = Math.max(at, cand.nextAttemptAt().toEpochMilli());
        }
        return anyPartitionHolds(cand, at - CLOCK_MARGIN_MILLIS, groupExists);
    }

    /**
     * Reads, before any candidate is judged, where the triggers of the candidates with a flow key can be, in the
     * order a trigger moves: every such key's waiting messages, then every partition's undelivered entries, then its
     * pending list, then the keys' waiting messages again (an entry that reached the stream without a slot is put
     * back to wait). A trigger moving on between two reads is found at the next. Read per candidate instead, the
     * partitions' reads made for an earlier candidate would be stale for a later one.
     */
    void prepare(List<SweeperStore.Candidate> candidates) {
        java.util.Set<String> keys = new java.util.TreeSet<>();
        for (SweeperStore.Candidate c : candidates) {
            String k = config.triggerFlowKey(c.flowKey());
            if (k != null && !flowWaiting.containsKey(k)) {
                keys.add(k);
            }
        }
        if (keys.isEmpty()) {
            return;
        }
        java.util.Map<String, Inspector.MessageIds> before = new java.util.HashMap<>();
        for (String k : keys) {
            before.put(k, inspector.flowWaitingMessageIds(config.topic(), k, MAX_IDS_READ));
        }
        for (int p = 0; p < partitions.size(); p++) {
            undelivered.put(p, inspector.undeliveredMessageIds(config.topic(), config.group(), p, MAX_IDS_READ));
        }
        if (groupExists) {
            for (int p = 0; p < partitions.size(); p++) {
                pendingTriggers.remove(p);
                pendingTriggers(p, 0);
            }
        }
        for (String k : keys) {
            Inspector.MessageIds first = before.get(k);
            Inspector.MessageIds again = inspector.flowWaitingMessageIds(config.topic(), k, MAX_IDS_READ);
            if (!first.complete() || !again.complete()) {
                flowWaiting.put(k, id -> true);
            } else {
                java.util.Set<String> ids = new java.util.HashSet<>(first.ids());
                ids.addAll(again.ids());
                flowWaiting.put(k, ids::contains);
            }
        }
    }

    /**
     * A trigger with a flow key gets its stream id when it is let in, any time after its run was written, so time
     * says nothing of it: it is looked for by its run's id where it can be ({@link #prepare}), in every partition (a
     * trigger published before the runs had flow control went to any). A read with more than it may look at takes
     * the run to be there.
     */
    private boolean flowTriggerOnItsWay(SweeperStore.Candidate cand, String flowKey) {
        if (!flowWaiting.containsKey(flowKey)) {
            prepare(List.of(cand));
        }
        String runId = cand.runId().toString();
        if (flowWaiting.get(flowKey).test(runId)) {
            return true;
        }
        for (int p = 0; p < partitions.size(); p++) {
            if (holdsRun(undelivered.get(p), runId) || groupExists && pendingTriggers(p, 0).test(runId)) {
                return true;
            }
        }
        return false;
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
     * none from {@code since} plus twice the clock margin and the publish lag on (the trigger was published by then,
     * on either clock): a lost trigger is found once the group read past that.
     */
    private static boolean waiting(Times t, long since) {
        return t.undelivered() && t.lastPublishedMillis() >= since
                && t.lastDeliveredMillis() < since + 2 * CLOCK_MARGIN_MILLIS + PUBLISH_LAG_MILLIS;
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
