package dev.runbus.internal.consume;

import dev.runbus.internal.redis.PartitionCalls;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * Keeps the claim of entries this consumer still holds (running, or acked and the ack not answered yet): every run,
 * the entries whose claim is older than half the keep-alive interval are XCLAIMed to this consumer with JUSTID, which
 * resets their idle time without counting a delivery. So the idle time of a held entry stays below 1.5 keep-alive
 * intervals, which {@link dev.runbus.SubscribeOptions} keeps below {@code minIdle}, however long its handler runs or
 * its ack waits. Short handlers never cost a keep-alive call.
 *
 * <p>An entry another consumer took over (claim lost) or that was deleted from the stream (trimmed, acked by
 * the script) is no longer held: its hold is dropped and it is reported. Only the hold this round looked at
 * is dropped, never a newer delivery's hold of the same entry.
 *
 * <p>The script works on one stream, so the due holds are renewed partition by partition: the calls of all the
 * partitions are sent at once and each has its own deadline ({@link PartitionCalls}). A round waits for their
 * answers a quarter of the interval at most; a partition whose call is still unanswered (its master stalled) is
 * skipped until the answer comes or the call times out, and its failure is reported, while the other partitions
 * keep their claims.
 */
final class KeepAlive implements Runnable {

    private static final int IDS_PER_CALL = 500;

    /** One call's holds and what the script answered for them. */
    private record Renewal(List<InFlight.Hold> chunk, Scripts.KeepAliveResult result) {
    }

    /** The renewals of one partition, sent at {@code sentNanos}. */
    private record Round(long sentNanos, List<Renewal> renewals) {
    }

    private final SubscriptionContext ctx;
    private final Scripts scripts;
    private final InFlight inFlight;
    private final SafeListener listener;
    private final PartitionCalls<Round> calls;
    private final long waitNanos;
    private final PartitionCalls.Outcome<Round> outcome = new PartitionCalls.Outcome<>() {
        @Override
        public void answered(int partition, Round round) {
            round.renewals().forEach(r -> renewed(partition, r, round.sentNanos()));
        }

        @Override
        public void failed(int partition, Throwable error) {
            // Not renewed: still due, so the next round tries again.
            listener.onLoopError("keep-alive of " + ctx.name(partition) + " for " + ctx.describe(), error);
        }
    };

    /** Per-key caps, when the subscription sets a flow cap (their holds are renewed with the claims); else null. */
    private final FlowControl flow;

    KeepAlive(SubscriptionContext ctx, Scripts scripts, InFlight inFlight, SafeListener listener,
              long commandTimeoutMillis, FlowControl flow) {
        this.ctx = ctx;
        this.flow = flow;
        this.scripts = scripts;
        this.inFlight = inFlight;
        this.listener = listener;
        this.calls = new PartitionCalls<>("keep-alive", commandTimeoutMillis);
        this.waitNanos = ctx.options().keepAliveInterval().toNanos() / 4;
    }

    @Override
    public void run() {
        calls.finishDone(outcome); // answers that came after their round stopped waiting
        long now = System.nanoTime();
        Map<Integer, List<InFlight.Hold>> byPartition = new TreeMap<>();
        for (InFlight.Hold h : inFlight.renewedBefore(now - ctx.options().keepAliveInterval().toNanos() / 2)) {
            byPartition.computeIfAbsent(h.partition(), p -> new ArrayList<>()).add(h);
        }
        byPartition.forEach((p, due) -> {
            if (!calls.inFlight(p)) {
                calls.send(p, () -> renew(p, due, now));
            }
        });
        calls.awaitAll(now + waitNanos, outcome);
    }

    private CompletableFuture<Round> renew(int partition, List<InFlight.Hold> due, long now) {
        List<CompletableFuture<Renewal>> sent = new ArrayList<>();
        for (int from = 0; from < due.size(); from += IDS_PER_CALL) {
            List<InFlight.Hold> chunk = List.copyOf(due.subList(from, Math.min(due.size(), from + IDS_PER_CALL)));
            List<String> ids = new ArrayList<>(chunk.size());
            chunk.forEach(h -> ids.add(h.streamId()));
            sent.add(scripts.keepAlive(ctx.name(partition), ctx.group(), ctx.consumer(), ids)
                    .thenApply(r -> new Renewal(chunk, r)));
        }
        return CompletableFuture.allOf(sent.toArray(new CompletableFuture<?>[0]))
                .thenApply(v -> new Round(now, sent.stream().map(CompletableFuture::join).toList()));
    }

    private void renewed(int partition, Renewal renewal, long now) {
        List<InFlight.Hold> chunk = renewal.chunk();
        Scripts.KeepAliveResult r = renewal.result();
        Set<String> lost = new HashSet<>(r.lost());
        Set<String> trimmed = new HashSet<>(r.trimmed());
        List<InFlight.Hold> renewed = new ArrayList<>(chunk.size());
        List<String> claimLost = new ArrayList<>();
        for (InFlight.Hold h : chunk) {
            if (lost.contains(h.streamId())) {
                // Entries acked meanwhile are "lost" too; only report those whose handler still ran.
                if (inFlight.releaseLost(h)) {
                    claimLost.add(ctx.qualify(partition, h.streamId()));
                }
            } else if (trimmed.contains(h.streamId())) {
                inFlight.release(h); // the script acked it: reported below whether or not it settled meanwhile
            } else {
                renewed.add(h);
            }
        }
        inFlight.renewed(renewed, now);
        if (flow != null) {
            flow.renew(partition, renewed);
        }
        if (!claimLost.isEmpty()) {
            listener.onClaimLost(ctx.topic(), ctx.group(), ctx.consumer(), claimLost);
        }
        if (!r.trimmed().isEmpty()) {
            listener.onTrimmedWhilePending(ctx.topic(), ctx.group(), ctx.qualify(partition, r.trimmed()));
        }
    }
}
