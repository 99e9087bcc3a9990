package dev.runbus.internal.consume;

import dev.runbus.AckMode;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Records the handler starts of a chunk before its handler runs (docs/architecture.md, rule 13: a delivery counts
 * when a handler starts on it), in each partition's start record (record_starts.lua). The reclaimer and the
 * re-read of a consumer's own pending entries count deliveries from that record.
 */
final class StartRecorder {

    private final SubscriptionContext ctx;
    private final Scripts scripts;
    private final SafeListener listener;
    /** How long a handler waits for the start record of an entry delivered before (Redis's command timeout). */
    private final long recordTimeoutMillis;

    StartRecorder(SubscriptionContext ctx, Scripts scripts, SafeListener listener, long recordTimeoutMillis) {
        this.ctx = ctx;
        this.scripts = scripts;
        this.listener = listener;
        this.recordTimeoutMillis = recordTimeoutMillis;
    }

    /**
     * Records one handler start on each entry of the chunk, by partition. Without waiting when every entry is on
     * its first delivery: a record lost then (the call failed, reported; or the process died before it left) only
     * lets the entry be delivered once more. An entry delivered before waits for its record (up to the command
     * timeout, then runs anyway): an entry that kills its process each time it runs is counted, and dead-lettered
     * as abandoned, instead of coming back forever. The record may reach Redis after the entry's ack (acks also
     * leave from the client's I/O thread, ahead of what other threads queued there): record_starts.lua then skips
     * it, as no longer pending.
     */
    void record(List<HeldDelivery> chunk) {
        if (ctx.options().ackMode() == AckMode.BEFORE_WORK) {
            return;
        }
        Map<Integer, List<String>> ids = new TreeMap<>();
        chunk.forEach(h -> ids.computeIfAbsent(h.hold().partition(), p -> new ArrayList<>()).add(h.hold().streamId()));
        List<CompletableFuture<Long>> sent = new ArrayList<>(ids.size());
        ids.forEach((partition, list) -> {
            try {
                sent.add(scripts.recordStarts(ctx.name(partition), ctx.group(), list).whenComplete((n, failure) -> {
                    if (failure != null) {
                        listener.onLoopError("record handler starts " + ctx.describe(), failure);
                    }
                }));
            } catch (RuntimeException failure) {
                listener.onLoopError("record handler starts " + ctx.describe(), failure);
            }
        });
        if (chunk.stream().anyMatch(h -> h.delivery().deliveryCount() > 1)) {
            try {
                CompletableFuture.allOf(sent.toArray(new CompletableFuture<?>[0]))
                        .get(recordTimeoutMillis, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // cleared after the handler, as a handler's own
            } catch (ExecutionException e) {
                // reported by the callback above
            } catch (TimeoutException e) {
                listener.onLoopError("record handler starts " + ctx.describe(), e);
            }
        }
    }
}
