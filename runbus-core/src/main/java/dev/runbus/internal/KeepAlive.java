package dev.runbus.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * Keeps the claim of entries this consumer still holds: every run, the entries whose claim is older than
 * half the keep-alive interval are XCLAIMed to this consumer with JUSTID, which resets their idle time
 * without counting a delivery. So the idle time of a held entry stays below 1.5 keep-alive intervals, which
 * {@link dev.runbus.SubscribeOptions} keeps below {@code minIdle}, however long its handler runs. Short
 * handlers never cost a keep-alive call.
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
        List<String> due = inFlight.renewedBefore(now - ctx.options().keepAliveInterval().toNanos() / 2);
        for (int from = 0; from < due.size(); from += IDS_PER_CALL) {
            List<String> chunk = due.subList(from, Math.min(due.size(), from + IDS_PER_CALL));
            List<String> lost = scripts.keepAlive(ctx.topic(), ctx.group(), ctx.consumer(), chunk);
            List<String> kept = new ArrayList<>(chunk);
            kept.removeAll(lost);
            inFlight.renewed(kept, now);
            if (!lost.isEmpty()) {
                // Entries acked meanwhile are "lost" too; only report those still held.
                List<String> stillHeld = new ArrayList<>();
                for (String id : lost) {
                    if (inFlight.contains(id)) {
                        stillHeld.add(id);
                        inFlight.release(id);
                    }
                }
                if (!stillHeld.isEmpty()) {
                    listener.onClaimLost(ctx.topic(), ctx.group(), ctx.consumer(), stillHeld);
                }
            }
        }
    }
}
