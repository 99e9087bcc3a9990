package dev.runbus.internal.consume;

import dev.runbus.internal.redis.Entry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The entries a consumer holds, one {@link Hold} per delivery it is running, with when its claim was last
 * renewed (System.nanoTime). Entries are kept by partition and stream id: stream ids of different partitions
 * can be equal.
 *
 * <p>A delivery whose handler succeeded is held until its ack is answered ({@link #settle}): the ack may wait for
 * the entry's start record and for the XACK in flight before it, and meanwhile the entry is kept alive, so that no
 * other consumer takes it over, and held, so that a claim of this consumer's own reclaimer is not run again.
 *
 * <p>A hold belongs to one delivery. After a lost claim the same consumer can take the entry back and run it
 * again while the first run still goes on; each run then has its own hold, and whatever one run does with
 * its hold (release it when it settles, renew or drop it in the keep-alive) never touches the other's.
 */
final class InFlight {

    private static final CompletableFuture<?> RECORDED = CompletableFuture.completedFuture(null);

    /** One delivery's hold on an entry; compared by identity. */
    static final class Hold {
        private final Entry.Ref ref;
        /** False for an entry acked before its handler runs: there is no claim to keep. */
        private final boolean keptAlive;
        private volatile long renewedAt;
        /** Set when its delivery's outcome is applied ({@link #settle}); changed under the map's lock of its entry. */
        private volatile boolean settled;
        /**
         * Answered once the handler start recorded for this delivery has run in Redis (or failed). Nothing may take
         * the entry out of the pending list before the record has run, since that script removes its field (see
         * {@link Acker}). Done from the start for a delivery whose start is not recorded.
         */
        private volatile CompletableFuture<?> startRecorded = RECORDED;
        /** The batch of first starts that carries this delivery's, while that may not have left ({@link FirstStarts}). */
        private volatile FirstStarts.Batch firstStart;
        /** The entry's flow key on a flow-controlled subscription, whose slot it holds ({@link FlowControl}); else null. */
        private volatile String flowKey;
        /** When its entry was parked (ms, Redis clock), for the admit-wait timer; -1 when it was not. */
        private volatile long flowParkedMillis = -1;
        /** What its admission charged its key under fair shares by handler time (ms); -1 when nothing. */
        private volatile double flowChargeMillis = -1;
        /** How long its handler ran (ms), once it ended with an ack; -1 before, or for another outcome. */
        private volatile double handlerMillis = -1;

        private Hold(Entry.Ref ref, boolean keptAlive, long renewedAt) {
            this.ref = ref;
            this.keptAlive = keptAlive;
            this.renewedAt = renewedAt;
        }

        /** Nanoseconds since this consumer's claim on the entry was last renewed (its read, claim or keep-alive). */
        long sinceRenewed(long nanoTime) {
            return nanoTime - renewedAt;
        }

        CompletableFuture<?> startRecorded() {
            return startRecorded;
        }

        /** Whether a start record was sent for this delivery ({@link #startRecorded} is its reply). */
        boolean startSent() {
            return startRecorded != RECORDED;
        }

        void startRecorded(CompletableFuture<?> reply) {
            this.startRecorded = reply;
        }

        /** Its first start goes with {@code batch}, which may not have left yet ({@link FirstStarts}). */
        void firstStartIn(FirstStarts.Batch batch) {
            this.firstStart = batch;
            this.startRecorded = batch.reply();
        }

        /** The batch carrying its first start, or null when its start went otherwise or not at all. */
        FirstStarts.Batch firstStart() {
            return firstStart;
        }

        /** Its first start was taken out of its batch before the batch left: nothing of it reaches Redis. */
        void firstStartWithdrawn() {
            this.startRecorded = RECORDED;
            this.firstStart = null;
        }

        /**
         * Whether its start record, if any, has been given to the client, so that a command given after this reaches
         * Redis after it where the client writes in call order.
         */
        boolean startRecordSent() {
            FirstStarts.Batch batch = firstStart;
            return batch == null || batch.sent();
        }

        Entry.Ref ref() {
            return ref;
        }

        String flowKey() {
            return flowKey;
        }

        void flowKey(String flowKey) {
            this.flowKey = flowKey;
        }

        long flowParkedMillis() {
            return flowParkedMillis;
        }

        void flowParkedMillis(long millis) {
            this.flowParkedMillis = millis;
        }

        double flowChargeMillis() {
            return flowChargeMillis;
        }

        void flowChargeMillis(double millis) {
            this.flowChargeMillis = millis;
        }

        double handlerMillis() {
            return handlerMillis;
        }

        void handlerMillis(double millis) {
            this.handlerMillis = millis;
        }

        int partition() {
            return ref.partition();
        }

        String streamId() {
            return ref.streamId();
        }
    }

    private final Map<Entry.Ref, Hold> holds = new ConcurrentHashMap<>();

    /**
     * Holds the entry for one delivery unless it is held already; returns the hold, or null if not taken.
     * {@code keptAlive} is false for an entry already acked (ack before work): it counts as in flight, but
     * the keep-alive leaves it alone, since it would only find it no longer pending.
     */
    Hold tryHold(Entry.Ref ref, boolean keptAlive) {
        return tryHold(ref, keptAlive, System.nanoTime());
    }

    /**
     * {@link #tryHold(Entry.Ref, boolean)} for an entry whose claim began at {@code claimedAt} (System.nanoTime): the
     * time its read or claim was sent, before which Redis cannot have delivered it. A process paused between the
     * reply and this hold must not count the pause as time the entry was held.
     */
    Hold tryHold(Entry.Ref ref, boolean keptAlive, long claimedAt) {
        Hold h = new Hold(ref, keptAlive, claimedAt);
        return holds.putIfAbsent(ref, h) == null ? h : null;
    }

    /** Whether this hold is still held: not released, not replaced by another, its entry not found trimmed. */
    boolean holds(Hold h) {
        return holds.get(h.ref) == h;
    }

    /** Lets go of this hold; returns false when it was not held any more (released, or replaced by another). */
    boolean release(Hold h) {
        return holds.remove(h.ref, h);
    }

    /**
     * Takes the hold for its delivery's outcome: true when it is still held and was not settled before. It stays held
     * (and kept alive) until {@link #release}, which the caller does once the outcome no longer needs it: when the ack
     * is answered, at once for the others.
     */
    boolean settle(Hold h) {
        boolean[] taken = new boolean[1];
        holds.computeIfPresent(h.ref, (ref, held) -> {
            if (held == h && !h.settled) {
                h.settled = true;
                taken[0] = true;
            }
            return held;
        });
        return taken[0];
    }

    /**
     * Lets go of a hold whose entry the keep-alive found no longer this consumer's (claimed by another, or acked).
     * Returns true when the claim was lost while the delivery ran, so that no outcome of it will be applied: held and
     * not settled. Settled, its ack was on its way, and may well be what took the entry out of the pending list.
     */
    boolean releaseLost(Hold h) {
        boolean[] running = new boolean[1];
        holds.computeIfPresent(h.ref, (ref, held) -> {
            if (held != h) {
                return held;
            }
            running[0] = !h.settled;
            return null;
        });
        return running[0];
    }

    /**
     * Lets go of any hold of these entries, which were deleted from the stream and acked (Redis 7.0's
     * XAUTOCLAIM drops deleted entries however short their idle time): there is nothing left to keep alive
     * and no outcome left to apply.
     */
    void releaseTrimmed(int partition, List<String> streamIds) {
        streamIds.forEach(id -> holds.remove(new Entry.Ref(partition, id)));
    }

    /** The holds kept alive whose claim was renewed before {@code nanoTime}. */
    List<Hold> renewedBefore(long nanoTime) {
        List<Hold> due = new ArrayList<>();
        holds.values().forEach(h -> {
            if (h.keptAlive && h.renewedAt - nanoTime < 0) {
                due.add(h);
            }
        });
        return due;
    }

    void renewed(List<Hold> renewed, long nanoTime) {
        renewed.forEach(h -> h.renewedAt = nanoTime);
    }

    /** The holds of deliveries still being handled: not settled. */
    int size() {
        int running = 0;
        for (Hold h : holds.values()) {
            if (!h.settled) {
                running++;
            }
        }
        return running;
    }
}
