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
import java.util.function.Supplier;

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
     * as abandoned, instead of coming back forever.
     *
     * <p>A new entry's record is one HSET ({@link Scripts#recordFirstStarts}), which must reach Redis before the
     * entry's ack, or it would leave a field for an entry no longer pending that nothing removes. It does: this
     * runner sends it before the handler starts, and the acker sends an ack only from a thread that came after
     * the handler (never from the client's I/O thread, whose writes overtake those other threads queued). Any
     * other record goes through record_starts.lua, which counts it against the delivery in the pending list and
     * skips an id no longer pending (a record sent again after a NOSCRIPT answer can arrive late).
     */
    void record(List<HeldDelivery> chunk) {
        if (ctx.options().ackMode() == AckMode.BEFORE_WORK) {
            return;
        }
        // By partition, and apart: entries read as new, whose first start is written as is, and the others, whose
        // record the script counts against their delivery in the pending list.
        Map<Integer, List<String>> first = new TreeMap<>();
        Map<Integer, List<String>> again = new TreeMap<>();
        chunk.forEach(h -> (h.newEntry() ? first : again).computeIfAbsent(h.hold().partition(), p -> new ArrayList<>())
                .add(h.hold().streamId()));
        List<CompletableFuture<Long>> sent = new ArrayList<>(again.size());
        first.forEach((partition, list) -> send(() -> scripts.recordFirstStarts(ctx.name(partition), ctx.group(), list)));
        again.forEach((partition, list) -> sent.add(send(() -> scripts.recordStarts(ctx.name(partition), ctx.group(),
                list))));
        if (chunk.stream().anyMatch(h -> h.delivery().deliveryCount() > 1)) { // never a new entry: see above
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

    /** Sends one record; a failure is reported, and answers a failed future. */
    private CompletableFuture<Long> send(Supplier<CompletableFuture<Long>> record) {
        try {
            return record.get().whenComplete((n, failure) -> {
                if (failure != null) {
                    listener.onLoopError("record handler starts " + ctx.describe(), failure);
                }
            });
        } catch (RuntimeException failure) {
            listener.onLoopError("record handler starts " + ctx.describe(), failure);
            return CompletableFuture.failedFuture(failure);
        }
    }
}
