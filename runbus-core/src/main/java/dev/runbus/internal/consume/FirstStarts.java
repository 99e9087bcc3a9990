package dev.runbus.internal.consume;

import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The first starts of entries read as new, written with plain {@code HSET}s, at most one per partition on the wire at
 * a time: the starts recorded while one is on its way leave together, in one command, when it is answered. A start
 * whose handler succeeded before its record left is withdrawn ({@link #withdraw}): its ack removes the entry, and
 * with it any need to count the start, so the record is never written (nor removed again by the ack).
 *
 * <p>Why this is safe: a first start that has not left when its process dies is not counted, which only lets the
 * entry be delivered once more, as a record sent but lost with its connection does ({@link StartRecorder#record}); the
 * wait is at most one reply of the partition's master (its command timeout when it stalls), so a record still lands
 * before another consumer may claim the entry (a fresh entry's record lands within half of {@code minIdle} less the
 * command timeout after its read, see {@code StartRecorder.isFresh}; behind one command at most, within half of
 * {@code minIdle} plus the command timeout, less than {@code minIdle}). Every later start of the entry (redelivered,
 * claimed) goes through record_starts.lua and its handler waits for it, so an entry that kills its process each time
 * is still counted and dead-lettered. Before, every start was one HSET of its own: a command per message.
 */
final class FirstStarts {

    /** One batch of first starts of a partition: filled until sent, then answered with the HSET's reply. */
    static final class Batch {
        /** Guarded by the lane; read by the sender once the lane handed the batch over. */
        private final Set<String> ids = new LinkedHashSet<>();
        private final CompletableFuture<Long> reply = new CompletableFuture<>();
        /** Set once the HSET has been given to the client: a command given to it after that reaches Redis after it. */
        private volatile boolean sent;

        CompletableFuture<Long> reply() {
            return reply;
        }

        boolean sent() {
            return sent;
        }
    }

    /** One partition's first starts: the batch being filled, and whether one is on the wire. */
    private static final class Lane {
        Batch open = new Batch();
        boolean onTheWire;
    }

    private final SubscriptionContext ctx;
    private final Scripts scripts;
    private final SafeListener listener;
    private final Lane[] lanes;

    FirstStarts(SubscriptionContext ctx, Scripts scripts, SafeListener listener) {
        this.ctx = ctx;
        this.scripts = scripts;
        this.listener = listener;
        this.lanes = new Lane[ctx.streamKeys().size()];
        for (int p = 0; p < lanes.length; p++) {
            lanes[p] = new Lane();
        }
    }

    /**
     * Records the first start of {@code streamId}: sent at once, from this thread, when none of its partition is on
     * the wire, else with the next batch. Returns the batch that carries it.
     */
    Batch add(int partition, String streamId) {
        Lane lane = lanes[partition];
        Batch carrying;
        Batch send = null;
        synchronized (lane) {
            carrying = lane.open;
            carrying.ids.add(streamId);
            if (!lane.onTheWire) {
                lane.onTheWire = true;
                send = carrying;
                lane.open = new Batch();
            }
        }
        if (send != null) {
            send(partition, send);
        }
        return carrying;
    }

    /**
     * Takes {@code streamId}'s start out of {@code batch} if the batch has not left yet; true if it was taken out
     * (then nothing of it will reach Redis, and the batch no longer answers for it).
     */
    boolean withdraw(int partition, String streamId, Batch batch) {
        Lane lane = lanes[partition];
        synchronized (lane) {
            return batch == lane.open && batch.ids.remove(streamId);
        }
    }

    /**
     * Sends {@code batch}, taken from its lane (so never empty: a start is withdrawn only from the open batch); when
     * it is answered, sends what was added meanwhile, or frees the lane.
     */
    private void send(int partition, Batch batch) {
        List<String> ids = new ArrayList<>(batch.ids);
        CompletableFuture<Long> reply;
        try {
            reply = scripts.recordFirstStarts(ctx.name(partition), ctx.group(), ids);
        } catch (RuntimeException failure) {
            reply = CompletableFuture.failedFuture(failure);
        }
        batch.sent = true;
        reply.whenComplete((n, failure) -> {
            Batch next = next(partition); // the lane's state first: whoever the reply wakes may add a start
            if (failure != null) {
                listener.onLoopError("record handler starts " + ctx.describe(), failure);
                batch.reply.completeExceptionally(failure);
            } else {
                batch.reply.complete(n);
            }
            if (next != null) {
                send(partition, next);
            }
        });
    }

    /** The lane's batch to send next, taken from it, or null (the lane is free) when nothing was added. */
    private Batch next(int partition) {
        Lane lane = lanes[partition];
        synchronized (lane) {
            if (lane.open.ids.isEmpty()) {
                lane.onTheWire = false;
                return null;
            }
            Batch next = lane.open;
            lane.open = new Batch();
            return next;
        }
    }
}
