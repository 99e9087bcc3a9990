package dev.runbus.internal.ordered;

import dev.runbus.internal.redis.Entry;
import java.util.ArrayDeque;
import java.util.List;

/**
 * A partition whose lease this consumer holds in an ordered group: the lease, until when this consumer may
 * still start work on it, and its entries read but not yet finished, in stream order. A partition taken again
 * after it was lost is a new object: nothing of the old one carries over.
 *
 * <p>Its life: catching up (claiming, in order, what is pending in the partition's group), then reading new
 * entries; one entry at a time, and a failed entry holds the partition until its retry is due. It ends when it
 * is lost (lease expired or taken, or a fenced call refused) or handed over in a rebalance: {@link #end}. A
 * runner works on it only between {@link #begin} and {@link #finish}, and only while {@link #mayStart} holds,
 * so that after its lease could have expired nothing new starts here.
 *
 * <p><b>Generations.</b> Whatever goes wrong half-way (Redis did not answer, or a read came back for an older
 * state) is repaired by {@link #startOver}: the local queue is forgotten and the partition catches up again from
 * the start of its pending entries, which hold every entry not acked, in order. Each start-over begins a new
 * generation, and every result that belongs to an older one (a read, a claimed page, a step's outcome) is
 * dropped: what it carried is pending and is claimed again, in order, by the new catching up.
 */
final class OwnedPartition {

    /** What a runner does with the partition next, in which generation. */
    enum Kind { CATCH_UP, RETRY, HANDLE }

    record Step(Kind kind, long generation) {
    }

    /** Where the read loop reads from: the generation, and the last id this generation knows ("-" for none). */
    record ReadFrom(long generation, String knownId) {
    }

    final int number;
    final String name;
    /** The lease's value for this consumer, which the fenced scripts compare. */
    final String holder;
    /** The lease's fencing token. */
    final long token;
    /** Acks sent and not yet answered. */
    final AckWindow acks;
    private volatile long validUntilNanos;
    private volatile boolean handOverRequested;
    /**
     * Until when (System.nanoTime) the head waits for a retry whose record Redis could not be told; 0 when none is
     * owed. A next owner would find no record and retry at once, so the partition is not handed over meanwhile.
     */
    private volatile long retryOwedUntil;
    /** The entry whose retry record is owed. */
    private volatile String retryOwedFor;

    // Guarded by this.
    private final ArrayDeque<Entry> entries = new ArrayDeque<>();
    private long generation;
    private boolean catchingUp = true;
    private String catchUpFrom = "-";
    private String catchUpSkip = "";
    /** The last id read or claimed in this generation: pending entries after it were read by a lost reply. */
    private String knownId = "-";
    private boolean scheduled;
    private boolean running;
    private boolean retryWaiting;
    private boolean ended;

    OwnedPartition(int number, String name, String holder, long validUntilNanos, long ackTimeoutMillis) {
        this.number = number;
        this.name = name;
        this.holder = holder;
        this.token = LeaseValue.parse(holder).token();
        this.acks = new AckWindow(name, ackTimeoutMillis);
        this.validUntilNanos = validUntilNanos;
    }

    /** The lease was renewed: work may start until {@code validUntil} (System.nanoTime). */
    void renewed(long validUntil) {
        this.validUntilNanos = validUntil;
    }

    /** True while the lease, as last renewed, certainly still holds and the partition has not ended. */
    boolean mayStart() {
        return System.nanoTime() - validUntilNanos < 0 && !isEnded();
    }

    synchronized boolean isEnded() {
        return ended;
    }

    /**
     * Where to read new entries from, or null when it should not be read now (catching up, ended, or
     * {@code room} entries queued already).
     */
    synchronized ReadFrom readFrom(int room) {
        return ended || catchingUp || entries.size() >= room ? null : new ReadFrom(generation, knownId);
    }

    synchronized int queued() {
        return entries.size();
    }

    /**
     * Entries the read loop read for generation {@code gen}. Read for an older generation (the partition started
     * over meanwhile), they are dropped, and the partition starts over once more: Redis may have run the read
     * after the new catching up had passed them, and they are pending under this consumer.
     */
    synchronized void add(long gen, List<Entry> read) {
        if (ended) {
            return; // pending under this consumer: the next owner claims them
        }
        if (gen != generation || catchingUp) {
            startOver();
            return;
        }
        entries.addAll(read);
        if (!read.isEmpty()) {
            knownId = read.get(read.size() - 1).streamId();
        }
    }

    /** Asks for a step if there is something to do and no runner has it; returns true if one should run. */
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
        Kind kind;
        if (entries.isEmpty()) {
            if (!catchingUp) {
                return null;
            }
            kind = Kind.CATCH_UP;
        } else {
            kind = entries.peek().deliveries() < 0 ? Kind.RETRY : Kind.HANDLE;
        }
        running = true;
        return new Step(kind, generation);
    }

    synchronized Entry head() {
        return entries.peek();
    }

    /** The head entry of {@code step}'s generation is finished (acked or dead-lettered): the next one is up. */
    synchronized void done(Step step) {
        if (step.generation() == generation) {
            entries.poll();
        }
    }

    /** The head entry, delivered again in place: it replaces the one waiting for its retry. */
    synchronized void redelivered(Step step, Entry e) {
        if (step.generation() == generation) {
            entries.poll();
            entries.addFirst(e);
        }
    }

    /** The head entry failed and waits for its retry, which {@link #retryDue} announces. */
    synchronized void waitForRetry(Step step) {
        if (step.generation() == generation) {
            Entry failed = entries.poll();
            if (failed != null) {
                // A negative delivery count marks the entry as one to deliver again before it runs.
                entries.addFirst(new Entry(failed.partition(), failed.streamId(), failed.fields(), -1,
                        failed.previousOwner()));
            }
        }
        retryWaiting = true;
    }

    /** Holds the partition (no step) until {@link #retryDue}: a pause after an error. */
    synchronized void pause() {
        retryWaiting = true;
    }

    synchronized void retryDue() {
        retryWaiting = false;
    }

    /** A page of what is pending, claimed in {@code step}'s generation; an empty page ends the catching up. */
    synchronized void caughtUp(Step step, OrderedScripts.Claimed page) {
        if (step.generation() != generation) {
            return; // started over meanwhile: the new catching up claims these again
        }
        if (page.lastId() == null) {
            catchingUp = false;
            return;
        }
        entries.addAll(page.entries());
        knownId = page.lastId();
        catchUpFrom = page.lastId();
        catchUpSkip = page.lastId();
    }

    synchronized String catchUpFrom() {
        return catchUpFrom;
    }

    synchronized String catchUpSkip() {
        return catchUpSkip;
    }

    /** Whether the next catch-up page is the first: it starts at the oldest pending entry. */
    synchronized boolean catchUpStarts() {
        return "-".equals(catchUpFrom);
    }

    /**
     * Forgets what was read and starts a new generation that catches up from the start of the pending entries,
     * which hold every entry not acked, in order. The entry that was running may run again: at least once.
     */
    synchronized void startOver() {
        generation++;
        entries.clear();
        catchingUp = true;
        catchUpFrom = "-";
        catchUpSkip = "";
        knownId = "-";
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

    /** The retry of {@code streamId}, the head, due at {@code dueNanos}, is not recorded in Redis: {@link #retryOwed}. */
    void oweRetryRecord(String streamId, long dueNanos) {
        retryOwedFor = streamId;
        retryOwedUntil = dueNanos;
    }

    /** The entry whose retry record is owed, when {@link #retryOwed}. */
    String retryOwedFor() {
        return retryOwedFor;
    }

    /** Until when (System.nanoTime) the owed retry waits. */
    long retryOwedUntil() {
        return retryOwedUntil;
    }

    /** The retry record owed is written, or no longer needed. */
    void retryRecorded() {
        retryOwedUntil = 0;
    }

    /** Whether the head waits for a retry that Redis does not know of yet, and its delay has not passed. */
    boolean retryOwed() {
        long until = retryOwedUntil;
        return until != 0 && System.nanoTime() - until < 0;
    }

    /**
     * Ends it unless a runner is in a step or a retry record is owed (a next owner would retry at once); returns
     * whether it ended (now or before).
     */
    synchronized boolean endIfIdle() {
        if (running || (!ended && retryOwed())) {
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
