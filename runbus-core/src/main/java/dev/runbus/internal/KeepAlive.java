package dev.runbus.internal;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Keeps the claim of entries this consumer still holds: every run, the entries whose claim is older than
 * half the keep-alive interval are XCLAIMed to this consumer with JUSTID, which resets their idle time
 * without counting a delivery. So the idle time of a held entry stays below 1.5 keep-alive intervals, which
 * {@link dev.runbus.SubscribeOptions} keeps below {@code minIdle}, however long its handler runs. Short
 * handlers never cost a keep-alive call.
 *
 * <p>An entry another consumer took over (claim lost) or that was deleted from the stream (trimmed, acked by
 * the script) is no longer held: its hold is dropped and it is reported. Only the hold this round looked at
 * is dropped, never a newer delivery's hold of the same entry.
 *
 * <p>The script works on one stream, so the due holds are renewed partition by partition.
 */
final class KeepAlive implements Runnable {

    private static final int IDS_PER_CALL = 500;

    private final SubscriptionContext ctx;
    private final Scripts scripts;
    private final InFlight inFlight;
    private final SafeListener listener;

    KeepAlive(SubscriptionContext ctx, Scripts scripts, InFlight inFlight, SafeListener listener) {
        this.ctx = ctx;
        this.scripts = scripts;
        this.inFlight = inFlight;
        this.listener = listener;
    }

    @Override
    public void run() {
        long now = System.nanoTime();
        Map<Integer, List<InFlight.Hold>> byPartition = new TreeMap<>();
        for (InFlight.Hold h : inFlight.renewedBefore(now - ctx.options().keepAliveInterval().toNanos() / 2)) {
            byPartition.computeIfAbsent(h.partition(), p -> new ArrayList<>()).add(h);
        }
        byPartition.forEach((p, due) -> renew(p, due, now));
    }

    private void renew(int partition, List<InFlight.Hold> due, long now) {
        for (int from = 0; from < due.size(); from += IDS_PER_CALL) {
            List<InFlight.Hold> chunk = due.subList(from, Math.min(due.size(), from + IDS_PER_CALL));
            List<String> ids = new ArrayList<>(chunk.size());
            chunk.forEach(h -> ids.add(h.streamId()));
            Scripts.KeepAliveResult r = scripts.keepAlive(ctx.name(partition), ctx.group(), ctx.consumer(), ids);
            Set<String> lost = new HashSet<>(r.lost());
            Set<String> trimmed = new HashSet<>(r.trimmed());
            List<InFlight.Hold> renewed = new ArrayList<>(chunk.size());
            List<String> claimLost = new ArrayList<>();
            for (InFlight.Hold h : chunk) {
                if (lost.contains(h.streamId())) {
                    // Entries settled meanwhile are "lost" too (acked); only report those still held.
                    if (inFlight.release(h)) {
                        claimLost.add(ctx.qualify(partition, h.streamId()));
                    }
                } else if (trimmed.contains(h.streamId())) {
                    inFlight.release(h); // the script acked it: reported below whether or not it settled meanwhile
                } else {
                    renewed.add(h);
                }
            }
            inFlight.renewed(renewed, now);
            if (!claimLost.isEmpty()) {
                listener.onClaimLost(ctx.topic(), ctx.group(), ctx.consumer(), claimLost);
            }
            if (!r.trimmed().isEmpty()) {
                listener.onTrimmedWhilePending(ctx.topic(), ctx.group(), ctx.qualify(partition, r.trimmed()));
            }
        }
    }
}
