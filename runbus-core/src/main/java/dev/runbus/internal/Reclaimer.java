package dev.runbus.internal;

/**
 * Takes over entries of the group that have been idle for at least {@code minIdle}: their consumer died,
 * or its handler failed and the entry waits for another delivery. Scans the whole PEL with XAUTOCLAIM's
 * cursor each round. It has slots of its own ({@code batchSize}), so a read loop blocked with its slots
 * never starves a takeover; when they are all busy it waits for some to free up and scans on. Entries trimmed while pending are acked
 * and reported by the script; entries past {@code maxDeliveries} are dead-lettered by the dispatcher.
 *
 * <p>Each partition's stream has a PEL of its own: a round scans them one after the other, each to the end.
 */
final class Reclaimer implements Runnable {

    private static final String START = "0-0";

    private final SubscriptionContext ctx;
    private final Scripts scripts;
    private final Slots slots;
    private final Dispatcher dispatcher;
    private final InFlight inFlight;
    private final SafeListener listener;
    private volatile boolean closed;

    Reclaimer(SubscriptionContext ctx, Scripts scripts, Slots slots, Dispatcher dispatcher, InFlight inFlight,
              SafeListener listener) {
        this.ctx = ctx;
        this.scripts = scripts;
        this.slots = slots;
        this.dispatcher = dispatcher;
        this.inFlight = inFlight;
        this.listener = listener;
    }

    @Override
    public void run() {
        for (int p = 0; p < ctx.partitions().count() && !closed; p++) {
            scan(p);
        }
    }

    private void scan(int partition) {
        long minIdle = ctx.options().minIdle().toMillis();
        String cursor = START;
        do {
            int room;
            try {
                room = slots.takeUpTo(ctx.options().batchSize(), 100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (room == 0) {
                continue; // all busy with earlier claims: wait for them, then scan on from the cursor
            }
            Scripts.ClaimResult r;
            try {
                r = scripts.reclaim(ctx.partitions(), partition, ctx.group(), ctx.consumer(), minIdle, cursor, room);
            } catch (RuntimeException e) {
                slots.release(room);
                throw e;
            }
            slots.release(room - r.claimed().size());
            if (!r.trimmed().isEmpty()) {
                // some may be running here still: no longer kept alive
                inFlight.releaseTrimmed(partition, r.trimmed());
                listener.onTrimmedWhilePending(ctx.topic(), ctx.group(), ctx.qualify(partition, r.trimmed()));
            }
            dispatcher.accept(r.claimed(), slots);
            cursor = r.nextCursor();
        } while (!START.equals(cursor) && !closed);
    }

    void stop() {
        closed = true;
    }
}
