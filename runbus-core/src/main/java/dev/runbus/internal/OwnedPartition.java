package dev.runbus.internal;

import java.util.ArrayDeque;
import java.util.List;

/**
 * A partition whose lease this consumer holds in an ordered group: the lease, until when this consumer may
 * still start work on it, and its entries read but not yet finished, in stream order. A partition taken again
 * after it was lost is a new object: nothing of the old one carries over.
 *
 * <p>Its life: catching up (claiming, in order, what earlier owners left pending), then reading new entries;
 * one entry at a time, and a failed entry holds the partition until its retry is due. It ends when it is lost
 * (lease expired or taken, or a fenced call refused) or handed over in a rebalance: {@link #end}. A runner
 * works on it only between {@link #begin} and {@link #finish}, and only while {@link #mayStart} holds, so that
 * after its lease could have expired nothing new starts here.
 */
final class OwnedPartition {

    /** What a runner does with the partition next. */
    enum Step { CATCH_UP, RETRY, HANDLE }

    final int number;
    final String name;
    /** The lease's value for this consumer, which the fenced scripts compare. */
    final String holder;
    /** Acks sent and not yet answered. */
    final AckWindow acks;
    private volatile long validUntilNanos;
    private volatile boolean handOverRequested;

    // Guarded by this.
    private final ArrayDeque<Entry> entries = new ArrayDeque<>();
    private boolean catchingUp = true;
    private String catchUpFrom = "-";
    private String catchUpSkip = "";
    private boolean scheduled;
    private boolean running;
    private boolean retryWaiting;
    private boolean ended;

    OwnedPartition(int number, String name, String holder, long validUntilNanos, long ackTimeoutMillis) {
        this.number = number;
        this.name = name;
        this.holder = holder;
        this.acks = new AckWindow(name, ackTimeoutMillis);
        this.validUntilNanos = validUntilNanos;
    }

    /** The lease was renewed by a call sent at {@code sentAtNanos}: work may start until {@code validUntil}. */
    void renewed(long validUntil) {
        this.validUntilNanos = validUntil;
    }

    /** True while the lease, as last renewed, certainly still holds and the partition has not ended. */
    boolean mayStart() {
        return System.nanoTime() - validUntilNanos < 0 && !isEnded();
    }

    /** The fencing token of the lease: the first part of its value. */
    long token() {
        return Long.parseLong(holder.substring(0, holder.indexOf(' ')));
    }

    synchronized boolean isEnded() {
        return ended;
    }

    /** Whether new entries should be read for it: caught up, and room for more. */
    synchronized boolean wantsNew(int room) {
        return !ended && !catchingUp && entries.size() < room;
    }

    synchronized int queued() {
        return entries.size();
    }

    /** Entries read for it by the read loop; ignored once it ended (they stay pending for the next owner). */
    synchronized void add(List<Entry> read) {
        if (!ended) {
            entries.addAll(read);
        }
    }

    /** Asks for a step if there is something to do and no runner has it; returns true if one should be queued. */
    synchronized boolean schedule() {
        if (scheduled || running || ended || retryWaiting || handOverRequested) {
            return false;
        }
        if (!catchingUp && entries.isEmpty()) {
            return false;
        }
        scheduled = true;
        return true;
    }

    /** A runner takes the partition; returns what to do, or null if nothing (ended, or no longer valid). */
    synchronized Step begin() {
        scheduled = false;
        if (ended || running || retryWaiting || handOverRequested || !mayStart()) {
            return null;
        }
        if (entries.isEmpty()) {
            if (!catchingUp) {
                return null;
            }
            running = true;
            return Step.CATCH_UP;
        }
        running = true;
        return entries.peek().deliveries() < 0 ? Step.RETRY : Step.HANDLE;
    }

    synchronized Entry head() {
        return entries.peek();
    }

    /** The head entry is finished (acked or dead-lettered): the next one is up. */
    synchronized void done() {
        entries.poll();
    }

    /** The head entry, delivered again in place: it replaces the one waiting for its retry. */
    synchronized void redelivered(Entry e) {
        entries.poll();
        entries.addFirst(e);
    }

    /** The head entry failed and waits for its retry, which {@link #retryDue} announces. */
    synchronized void waitForRetry() {
        Entry failed = entries.poll();
        if (failed != null) {
            // A negative delivery count marks the entry as one to deliver again before it runs.
            entries.addFirst(new Entry(failed.partition(), failed.streamId(), failed.fields(), -1,
                    failed.previousOwner()));
        }
        retryWaiting = true;
    }

    synchronized void retryDue() {
        retryWaiting = false;
    }

    /** A page of what earlier owners left pending; an empty page ends the catching up. */
    synchronized void caughtUp(OrderedScripts.Claimed page) {
        if (page.lastId() == null) {
            catchingUp = false;
            return;
        }
        entries.addAll(page.entries());
        catchUpFrom = page.lastId();
        catchUpSkip = page.lastId();
    }

    synchronized String catchUpFrom() {
        return catchUpFrom;
    }

    synchronized String catchUpSkip() {
        return catchUpSkip;
    }

    /**
     * Something failed half-way (Redis did not answer): forget what was read and start over from what is pending,
     * which holds every entry not acked, in order. The entry that was running may run again: at least once.
     */
    synchronized void startOver() {
        acks.clear();
        entries.clear();
        catchingUp = true;
        catchUpFrom = "-";
        catchUpSkip = "";
    }

    /** The runner is done with its step. */
    synchronized void finish() {
        running = false;
    }

    /** Hand-over in a rebalance: no step starts any more; {@link #endIfIdle} ends it once its runner is done. */
    void requestHandOver() {
        handOverRequested = true;
    }

    boolean handOverRequested() {
        return handOverRequested;
    }

    /** Ends it unless a runner is in a step; returns whether it ended (now or before). */
    synchronized boolean endIfIdle() {
        if (running) {
            return false;
        }
        end();
        return true;
    }

    /** Ends it: nothing more starts here; what was read stays pending for the next owner. */
    synchronized void end() {
        ended = true;
        entries.clear();
    }

    synchronized boolean isRunning() {
        return running;
    }
}
