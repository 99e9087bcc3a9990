package dev.runbus.internal;

/**
 * Takes over entries of the group that have been idle for at least {@code minIdle}: their consumer died,
 * or its handler failed and the entry waits for another delivery. Scans the whole PEL with XAUTOCLAIM's
 * cursor each round, claiming no more than there are free slots. Entries trimmed while pending are acked
 * and reported by the script; entries past {@code maxDeliveries} are dead-lettered by the dispatcher.
 */
final class Reclaimer implements Runnable {

    private static final String START = "0-0";

    private final SubscriptionContext ctx;
    private final Scripts scripts;
    private final Slots slots;
    private final Dispatcher dispatcher;
    private final SafeListener listener;
    private volatile boolean closed;

    Reclaimer(SubscriptionContext ctx, Scripts scripts, Slots slots, Dispatcher dispatcher, SafeListener listener) {
        this.ctx = ctx;
        this.scripts = scripts;
        this.slots = slots;
        this.dispatcher = dispatcher;
        this.listener = listener;
    }

    @Override
    public void run() {
        long minIdle = ctx.options().minIdle().toMillis();
        String cursor = START;
        do {
            int room = slots.takeFree(ctx.options().batchSize());
            if (room == 0) {
                return;
            }
            Scripts.ClaimResult r;
            try {
                r = scripts.reclaim(ctx.topic(), ctx.group(), ctx.consumer(), minIdle, cursor, room);
            } catch (RuntimeException e) {
                slots.release(room);
                throw e;
            }
            slots.release(room - r.claimed().size());
            if (!r.trimmed().isEmpty()) {
                listener.onTrimmedWhilePending(ctx.topic(), ctx.group(), r.trimmed());
            }
            dispatcher.accept(r.claimed());
            cursor = r.nextCursor();
        } while (!START.equals(cursor) && !closed);
    }

    void stop() {
        closed = true;
    }
}
