package dev.runbus.internal.redis;

import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The readers' requests for the cluster's topology, coalesced: a refresh starts only when none is on its way and the
 * last one started at least {@code minIntervalNanos} ago; other requests are dropped (the refresh on its way, or the
 * one just made, answers them). A reader asks after every read that failed, and while a master is marked failed
 * without a replacement every read of its slots fails at once: uncoalesced, a busy reader asked hundreds of times a
 * second, each refresh asking every node for CLUSTER NODES and rebuilding the slot tables, and the garbage it made
 * paused the whole process, the other masters' partitions with it (docs/architecture.md, rule 14).
 */
final class TopologyRefresh implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(TopologyRefresh.class);

    private final Supplier<CompletionStage<?>> refresh;
    private final long minIntervalNanos;
    private final LongSupplier nanoClock;
    private boolean inFlight;
    private boolean started;
    private long lastStart;

    /** {@code refresh} starts one refresh without waiting for it; {@code nanoClock} is System::nanoTime but in tests. */
    TopologyRefresh(Supplier<CompletionStage<?>> refresh, long minIntervalNanos, LongSupplier nanoClock) {
        this.refresh = refresh;
        this.minIntervalNanos = minIntervalNanos;
        this.nanoClock = nanoClock;
    }

    /** Starts a refresh unless one is on its way or started less than the interval ago. Never waits. */
    @Override
    public void run() {
        synchronized (this) {
            long now = nanoClock.getAsLong();
            if (inFlight || started && now - lastStart < minIntervalNanos) {
                return;
            }
            inFlight = true;
            started = true;
            lastStart = now;
        }
        try {
            refresh.get().whenComplete((ok, failure) -> {
                if (failure != null) {
                    log.debug("refreshing the cluster topology failed: {}", failure.toString());
                }
                done();
            });
        } catch (RuntimeException e) {
            done();
            throw e;
        }
    }

    private synchronized void done() {
        inFlight = false;
    }
}
