package dev.runbus.internal.ordered;

import dev.runbus.internal.consume.SubscriptionContext;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leases an ordered consumer hands over, released without a thread waiting for them: each release waits for
 * its partition's acks on their way (so that they land before the lease goes), then deletes the lease if it is
 * still the one this consumer took (lease_renew.lua with 0). So a release to a stalled master holds up neither the
 * tick, which renews the other leases and the membership, nor a runner (docs/architecture.md, rule 14). Until its
 * release is settled (answered, failed, or given up after the command timeout), a partition is not taken again here.
 */
final class LeaseReleases {

    private static final Logger log = LoggerFactory.getLogger(LeaseReleases.class);

    private final SubscriptionContext ctx;
    private final OrderedScripts scripts;
    private final SafeListener listener;
    private final long timeoutMillis;
    private final Map<Integer, CompletableFuture<Boolean>> inFlight = new ConcurrentHashMap<>();

    LeaseReleases(SubscriptionContext ctx, OrderedScripts scripts, SafeListener listener, long timeoutMillis) {
        this.ctx = ctx;
        this.scripts = scripts;
        this.listener = listener;
        this.timeoutMillis = timeoutMillis;
    }

    /** Releases the lease of {@code p}, which has ended, once its acks are answered; returns at once. */
    void release(OwnedPartition p) {
        CompletableFuture<Boolean> release = p.acks.answered()
                .thenCompose(acked -> scripts.renew(p.name, p.holder, 0)
                        .orTimeout(timeoutMillis, TimeUnit.MILLISECONDS));
        inFlight.put(p.number, release);
        release.whenComplete((held, failure) -> {
            inFlight.remove(p.number, release);
            if (failure != null) {
                // The lease runs out by itself; a release that still runs later finds it taken, or deletes it.
                listener.onLoopError("releasing the lease of " + p.name + " for " + ctx.describe(),
                        failure instanceof CompletionException && failure.getCause() != null ? failure.getCause()
                                : failure);
                return;
            }
            listener.meters().leaseChanged(ctx.topic(), ctx.group(), "released");
            log.debug("{}: handed over partition {}", ctx.describe(), p.number);
        });
    }

    /** Whether the release of {@code partition} is on its way. */
    boolean inFlight(int partition) {
        return inFlight.containsKey(partition);
    }

    /** Waits up to {@code waitMillis} in all for the releases on their way: a close returns with its leases freed. */
    void awaitAll(long waitMillis) {
        try {
            CompletableFuture.allOf(inFlight.values().toArray(new CompletableFuture<?>[0]))
                    .get(waitMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // each failure was reported; a release left unanswered frees its lease when it runs, or the lease expires
        }
    }
}
