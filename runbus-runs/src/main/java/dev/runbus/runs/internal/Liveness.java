package dev.runbus.runs.internal;

import dev.runbus.Inspector;
import dev.runbus.RunbusException;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.RunsConfig;

/**
 * What Redis knows about the deliveries of the workers' group, read once per sweep: whether a run the
 * sweeper found has a live delivery. Only a group (or stream) that is gone means "nothing is live"; any other
 * failure to ask Redis is thrown, so that the sweep republishes nothing rather than runs that may be
 * executing.
 */
final class Liveness {

    /** Tolerated difference between the PostgreSQL and Redis clocks when comparing times with stream ids. */
    static final long CLOCK_MARGIN_MILLIS = 1000;

    private final Inspector inspector;
    private final RunsConfig config;
    private final boolean groupExists;
    private final long lastDeliveredMillis;
    private final long lastPublishedMillis;

    private Liveness(Inspector inspector, RunsConfig config, boolean groupExists, long lastDeliveredMillis,
                     long lastPublishedMillis) {
        this.inspector = inspector;
        this.config = config;
        this.groupExists = groupExists;
        this.lastDeliveredMillis = lastDeliveredMillis;
        this.lastPublishedMillis = lastPublishedMillis;
    }

    static Liveness read(Inspector inspector, RunsConfig config) {
        boolean exists = false;
        long delivered = -1;
        for (Inspector.GroupInfo g : inspector.groups(config.topic())) {
            if (g.name().equals(config.group())) {
                exists = true;
                delivered = millisOf(g.lastDeliveredId());
            }
        }
        long published = inspector.stream(config.topic()).map(s -> millisOf(s.lastId())).orElse(-1L);
        return new Liveness(inspector, config, exists, delivered, published);
    }

    /** @throws RunbusException when Redis cannot tell (a timeout, a lost connection): the sweep must stop */
    boolean isLive(SweeperStore.Candidate cand) {
        if (cand.status() == RunStatus.RUNNING && cand.streamId() != null) {
            return groupExists && isPending(cand.streamId());
        }
        // Pending: its trigger (published at about updatedAt) is live if the stream has entries from then on and
        // the group has not delivered that far yet.
        long since = cand.updatedAt().toEpochMilli() - CLOCK_MARGIN_MILLIS;
        return lastPublishedMillis >= since && lastDeliveredMillis < since;
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
