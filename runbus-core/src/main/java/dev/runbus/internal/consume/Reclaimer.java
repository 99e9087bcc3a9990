package dev.runbus.internal.consume;

import dev.runbus.internal.redis.Entry;
import dev.runbus.internal.redis.PartitionCalls;
import dev.runbus.internal.redis.Slots;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

/**
 * Takes over entries of the group that have been idle for at least {@code minIdle}: their consumer died,
 * or its handler failed and the entry waits for another delivery. Scans the whole PEL with XAUTOCLAIM's
 * cursor each round. It has slots of its own ({@code batchSize}), so a read loop blocked with its slots
 * never starves a takeover; when they are all busy it waits for some to free up and scans on. Entries trimmed while pending are acked
 * and reported by the script; entries past {@code maxDeliveries} are dead-lettered by the dispatcher.
 *
 * <p>Each partition's stream has a PEL of its own: a round scans them one after the other, each to the end. A
 * partition fails alone ({@link PartitionCalls}): its call is awaited {@value #WAIT_MILLIS} ms at most, then left in
 * flight (with its slots) while the round goes on with the next partition; the partition is skipped until the answer
 * comes or the call times out, which is reported. A call takes at most its partition's share of the slots, so calls
 * stalled on a dead master leave the others theirs. A partition is scanned only once the read loop re-read this
 * consumer's own pending entries there. Until its answer comes, what a call claimed is pending under this
 * consumer, neither held nor kept alive: so a late answer is handed on as soon as it comes ({@code wake} ends the
 * pause between rounds, a round in progress looks between its calls), those of its entries still this consumer's
 * once renewed ({@link LateAnswers}). A wake scans nothing unless the round is due.
 */
final class Reclaimer implements Runnable {

    private static final String START = "0-0";
    /** How long a scan waits for one call's answer before it leaves the call in flight and moves on. */
    static final long WAIT_MILLIS = 200;

    private final SubscriptionContext ctx;
    private final Scripts scripts;
    private final Slots slots;
    private final Dispatcher dispatcher;
    private final InFlight inFlight;
    private final SafeListener listener;
    private final PartitionCalls<Scripts.ClaimResult> calls;
    /** Slots each partition's call in flight holds, by partition (the loop's thread only). */
    private final int[] room;
    /** Each partition's scan cursor after its last answered call (the loop's thread only). */
    private final String[] cursor;
    private final int share;
    private final IntPredicate reread;
    /** When the next round is due, System.nanoTime (the loop's thread only); a wake before it scans nothing. */
    private long nextRoundNanos = System.nanoTime();
    private final LateAnswers lateAnswers;
    /** For the answers a scan waits for. */
    private final PartitionCalls.Outcome<Scripts.ClaimResult> inTime = new Handling(false);
    /** For the answers that came after their scan moved on. */
    private final PartitionCalls.Outcome<Scripts.ClaimResult> late = new Handling(true);
    private volatile boolean closed;
    /** Per-key caps, when the subscription sets a flow cap (expired holds are reaped each round); else null. */
    private final FlowControl flow;

    /**
     * {@code reread} tells whether the read loop re-read this consumer's own pending entries of a partition yet;
     * {@code wake} runs {@link #run} now (on any thread): a call left in flight was answered.
     */
    Reclaimer(SubscriptionContext ctx, Scripts scripts, Slots slots, Dispatcher dispatcher, InFlight inFlight,
              SafeListener listener, long commandTimeoutMillis, IntPredicate reread, Runnable wake,
              FlowControl flow) {
        this.ctx = ctx;
        this.flow = flow;
        this.scripts = scripts;
        this.slots = slots;
        this.dispatcher = dispatcher;
        this.inFlight = inFlight;
        this.listener = listener;
        int partitions = ctx.partitions().count();
        this.calls = new PartitionCalls<>("reclaim", commandTimeoutMillis, wake);
        this.room = new int[partitions];
        this.cursor = new String[partitions];
        this.share = Math.max(1, (ctx.options().batchSize() + partitions - 1) / partitions);
        this.reread = reread;
        this.lateAnswers = new LateAnswers(ctx, scripts, listener);
    }

    /** What becomes of a call's answer: its entries are handed on, those of a late one once renewed. */
    private final class Handling implements PartitionCalls.Outcome<Scripts.ClaimResult> {
        private final boolean late;

        Handling(boolean late) {
            this.late = late;
        }

        @Override
        public void answered(int partition, Scripts.ClaimResult r) {
            slots.release(room[partition] - r.claimed().size());
            room[partition] = 0;
            if (!r.trimmed().isEmpty()) {
                // some may be running here still: no longer kept alive
                inFlight.releaseTrimmed(partition, r.trimmed());
                listener.onTrimmedWhilePending(ctx.topic(), ctx.group(), ctx.qualify(partition, r.trimmed()));
            }
            listener.meters().claimed(ctx.topic(), ctx.group(), r.claimed().size());
            List<Entry> ours = late ? lateAnswers.renew("claim", partition, r.claimed()) : r.claimed();
            slots.release(r.claimed().size() - ours.size());
            dispatcher.accept(ours, slots);
            cursor[partition] = r.nextCursor();
        }

        @Override
        public void failed(int partition, Throwable error) {
            slots.release(room[partition]);
            room[partition] = 0;
            cursor[partition] = START; // scanned again from the start next round
            listener.onLoopError("reclaiming " + ctx.name(partition) + " for " + ctx.describe(), error);
        }
    }

    /**
     * Hands on the late answers, then scans every partition without a call in flight, unless woken for those answers
     * before the round is due: a late answer is no reason to scan sooner.
     */
    @Override
    public void run() {
        calls.finishDone(late);
        long now = System.nanoTime();
        if (now - nextRoundNanos < 0) {
            return;
        }
        nextRoundNanos = now + ctx.options().claimInterval().toNanos();
        if (flow != null) {
            flow.reap(); // first: the slots of a dead consumer's entries, whose takeover follows
        }
        for (int p = 0; p < ctx.partitions().count() && !closed; p++) {
            if (!calls.inFlight(p) && reread.test(p)) { // else both would deliver the same idle entries
                scan(p);
            }
        }
    }

    /** Scans one partition to the end of its PEL, unless a call stalls: then it stays in flight and the scan ends. */
    private void scan(int partition) {
        long minIdle = ctx.options().minIdle().toMillis();
        cursor[partition] = START;
        do {
            calls.finishDone(late); // other partitions' late answers, between this scan's calls
            int taken;
            try {
                taken = slots.takeUpTo(share, 100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (taken == 0) {
                continue; // all busy with earlier claims: wait for them, then scan on from the cursor
            }
            room[partition] = taken;
            String from = cursor[partition];
            calls.send(partition, () -> scripts.reclaim(ctx.partitions(), partition, ctx.group(), ctx.consumer(),
                    minIdle, from, taken));
            if (!calls.await(partition, TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS), inTime)) {
                return; // no answer yet: handled when it comes, the other partitions go on meanwhile
            }
        } while (!START.equals(cursor[partition]) && !closed);
    }

    void stop() {
        closed = true;
    }
}
