package dev.runbus.internal.consume;

import dev.runbus.AckMode;
import dev.runbus.BatchHandler;
import dev.runbus.Delivery;
import dev.runbus.Handler;
import dev.runbus.Message;
import dev.runbus.internal.redis.Entry;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.Slots;
import dev.runbus.internal.redis.WireFormat;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the handler on entries the read loop and the reclaimer hand over, {@code concurrency} at a time, and
 * applies the outcome. Every entry arrives holding one {@link Slots slot}, released when it is finished.
 *
 * <p>{@code concurrency} runner tasks pull from a local queue; on the default executor each is a platform
 * thread, on a virtual-thread executor each is a virtual thread. A batch is handed over in at most
 * {@code concurrency} chunks, so that a runner wakes up once per chunk rather than once per entry. A runner that
 * found no work for {@value #IDLE_POLL_MILLIS} ms takes the next entry of a chunk another runner is on (shared once
 * its starts are recorded), so that an entry waits about that long, not a whole slow handler of its chunk, while a
 * runner is free. With a {@link BatchHandler} a batch is one chunk and one call, and its deliveries are settled
 * through a {@link BatchCall}. A runner never dies of an exception nor of an interrupt; it ends only on close.
 *
 * <p>Entries of all the topic's partitions arrive mixed; each is held, acked and dead-lettered by its partition
 * and stream id, and handlers see the id {@link Partitions#qualify} hands out for it.
 *
 * <p>A delivery counts when a handler starts on it (docs/architecture.md, rule 13): right before an entry's handler
 * starts, one start of it is recorded in its partition's start record ({@link StartRecorder}), and the reclaimer and
 * the re-read of this consumer's own pending entries count an entry's deliveries from that record, not from the
 * pending list, which also counts reads and claims whose reply was lost. So a process that dies in the middle of a
 * chunk costs the entries it had not started nothing. An entry started {@code maxDeliveries} times without an outcome
 * runs once more alone among the bus's handlers ({@link HandlerGate}), so that an entry that only ran beside the one
 * that killed its process is never dead-lettered for it. Ack-before-work mode records nothing: it never delivers an
 * entry twice.
 */
public final class Dispatcher {

    private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);
    /**
     * Queued once per runner when the drain begins, behind the work queued before it (nothing is queued after it):
     * a runner that takes it helps with the chunks other runners are on and then ends, instead of at the end of its
     * wait for work. Told apart by identity; it holds nothing and is never run.
     */
    private static final Chunk WAKE_UP = new Chunk(List.of());
    /** How long a runner waits for a chunk before it helps with one another runner is on. */
    static final long IDLE_POLL_MILLIS = 50;

    private final SubscriptionContext ctx;
    /** Exactly one of the two is set. */
    private final Handler handler;
    private final BatchHandler batchHandler;
    private final OutcomePolicy policy;
    private final InFlight inFlight;
    private final Acker acker;
    private final SafeListener listener;
    private final StartRecorder starts;
    private final OutcomeApplier outcomes;
    /** The bus's handlers' turns: who runs beside whom, and who runs alone. */
    private final HandlerGate gate;
    /** Per-key caps, when the subscription sets a flow cap; else null. */
    private final FlowControl flow;
    /** How long an entry that must run alone waits for the bus's running handlers to finish: {@code minIdle}. */
    private final long aloneWaitNanos;
    private final BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
    /** Chunks a runner is on whose other entries an idle runner may take. */
    private final Queue<Chunk> begun = new ConcurrentLinkedQueue<>();
    private final CountDownLatch runnersDone;
    /** Guards {@link #draining} against a hand-off: what is queued before the drain begins is run. */
    private final Object intake = new Object();
    private volatile boolean started;
    private volatile boolean draining;
    /** Set when close gave up waiting: from then on no outcome is applied and nothing new starts. */
    private volatile boolean stopped;

    Dispatcher(SubscriptionContext ctx, Handler handler, BatchHandler batchHandler, InFlight inFlight, Acker acker,
               DeadLetterMover deadLetters, Retrier retrier, SafeListener listener, Scripts scripts,
               long recordTimeoutMillis, HandlerGate gate, FlowControl flow) {
        if ((handler == null) == (batchHandler == null)) {
            throw new IllegalArgumentException("a dispatcher runs either a handler or a batch handler");
        }
        this.ctx = ctx;
        this.handler = handler;
        this.batchHandler = batchHandler;
        this.policy = new OutcomePolicy(ctx.options().maxDeliveries());
        this.inFlight = inFlight;
        this.acker = acker;
        this.listener = listener;
        this.starts = new StartRecorder(ctx, scripts, inFlight, listener, recordTimeoutMillis);
        this.outcomes = new OutcomeApplier(ctx, policy, inFlight, acker, deadLetters, retrier, listener,
                () -> stopped, starts, flow);
        this.gate = gate;
        this.flow = flow;
        this.aloneWaitNanos = ctx.options().minIdle().toNanos();
        this.runnersDone = new CountDownLatch(ctx.options().concurrency());
    }

    void start(Executor executor) {
        started = true;
        int n = ctx.options().concurrency();
        for (int i = 0; i < n; i++) {
            try {
                executor.execute(this::runner);
            } catch (RejectedExecutionException e) {
                for (int unstarted = i; unstarted < n; unstarted++) {
                    runnersDone.countDown();
                }
                throw new IllegalStateException("the executor of " + ctx.describe() + " rejected a handler task", e);
            }
        }
    }

    /**
     * Takes over entries, each holding one slot of {@code slots}. Never throws: an entry it cannot take stays
     * pending in Redis and its slot is released. Once the drain began, it takes none: a read that outlived
     * the read loop's close leaves its entries pending, unheld, for this consumer's next start or a takeover.
     */
    void accept(List<Entry> entries, Slots slots) {
        accept(entries, slots, System.nanoTime());
    }

    /**
     * {@link #accept(List, Slots)} for entries of a read or claim sent at {@code sentAt} (System.nanoTime): their holds
     * count from then, since Redis may have delivered them as early as that (a process paused before the hand-over
     * must not write an entry's first start as if it had just read it: {@link StartRecorder}).
     */
    void accept(List<Entry> entries, Slots slots, long sentAt) {
        if (entries.isEmpty()) {
            return;
        }
        if (draining) {
            slots.release(entries.size());
            return;
        }
        if (ctx.options().ackMode() == AckMode.BEFORE_WORK && !ackBeforeWork(entries, slots)) {
            return;
        }
        boolean afterWork = ctx.options().ackMode() == AckMode.AFTER_WORK;
        List<Entry> notOurs = new ArrayList<>();
        List<HeldDelivery> ready = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            InFlight.Hold hold = null;
            try {
                String forGroup = text(e.fields().get(WireFormat.FOR_GROUP));
                if (forGroup != null && !forGroup.equals(ctx.group())) {
                    notOurs.add(e);
                    slots.release(1);
                } else if ((hold = inFlight.tryHold(e.ref(), afterWork, sentAt)) == null) {
                    // Already held here (read and claimed at once): one delivery is enough.
                    slots.release(1);
                } else if (policy.isAbandoned(attempt(e)) && afterWork) {
                    inFlight.release(hold);
                    outcomes.deadLetter(e.partition(), e.streamId(), attempt(e),
                            WireFormat.decodeOrPlaceholder(ctx.qualify(e.partition(), e.streamId()), e),
                            OutcomePolicy.abandonedReason(attempt(e), e.previousOwner()), slots,
                            flow == null ? null : WireFormat.flowKey(e.fields()));
                } else {
                    if (flow != null) {
                        hold.flowKey(WireFormat.flowKey(e.fields()));
                        hold.flowParkedMillis(WireFormat.flowParkedMillis(e.fields()));
                        hold.flowChargeMillis(WireFormat.flowChargeMillis(e.fields()));
                    }
                    HeldDelivery h = decode(e, hold, slots);
                    if (h != null) {
                        ready.add(h);
                    }
                }
            } catch (RuntimeException failed) {
                if (hold != null) {
                    inFlight.release(hold);
                }
                slots.release(1);
                listener.onLoopError("dispatch " + ctx.describe(), failed);
            }
        }
        if (flow != null && !ready.isEmpty()) {
            // Entries with a flow key go to the runners when their partition confirmed their slots; those whose key
            // has no free slot wait again, unrun.
            ready = flow.confirm(ready, inFlight, this::handOff);
        }
        handOff(ready);
        if (afterWork) {
            notOurs.forEach(e -> acker.ack(e.partition(), e.streamId()));
        }
    }

    /**
     * Splits the entries into at most {@code concurrency} chunks, in order, one queue element each; for a batch
     * handler, the entries are one chunk.
     */
    private void handOff(List<HeldDelivery> ready) {
        if (ready.isEmpty()) {
            return;
        }
        int chunks = batchHandler != null ? 1 : Math.min(ctx.options().concurrency(), ready.size());
        int size = (ready.size() + chunks - 1) / chunks;
        synchronized (intake) {
            if (draining) { // the runners may be gone: nobody would run these
                int n = unhold(ready);
                if (ctx.options().ackMode() == AckMode.BEFORE_WORK) {
                    // Acked before work while the drain began: at most once, so they are lost. Say so.
                    log.warn("{}: {} entries acked before work arrived as the subscription closed; they are not "
                            + "handled (ackMode BEFORE_WORK delivers at most once)", ctx.describe(), n);
                }
                return;
            }
            for (int from = 0; from < ready.size(); from += size) {
                queue.add(new Chunk(new ArrayList<>(ready.subList(from, Math.min(ready.size(), from + size)))));
            }
        }
    }

    /** At-most-once mode: ack the batch before any handler runs; if that fails, run none of it. */
    private boolean ackBeforeWork(List<Entry> entries, Slots slots) {
        Map<Integer, List<String>> ids = new TreeMap<>();
        entries.forEach(e -> ids.computeIfAbsent(e.partition(), p -> new ArrayList<>()).add(e.streamId()));
        try {
            acker.ackNow(ids);
            return true;
        } catch (RuntimeException failed) {
            slots.release(entries.size());
            listener.onLoopError("ack before work " + ctx.describe(), failed);
            return false;
        }
    }

    /** The delivery of an entry, or null when it cannot be decoded (it is dead-lettered instead). */
    private HeldDelivery decode(Entry e, InFlight.Hold hold, Slots slots) {
        String id = ctx.qualify(e.partition(), e.streamId());
        Message message;
        try {
            message = WireFormat.decode(id, e.fields());
        } catch (RuntimeException bad) {
            inFlight.release(hold);
            outcomes.deadLetter(e.partition(), e.streamId(), e.deliveries(), WireFormat.placeholder(id),
                    "cannot decode entry: " + bad.getMessage(), slots, hold.flowKey());
            return null;
        }
        return new HeldDelivery(new Delivery(message, ctx.topic(), id, ctx.group(), ctx.consumer(), e.deliveries(), 0,
                attempt(e)), hold, slots, e.fresh());
    }

    /** The attempt at the message an entry's delivery is: its delivery count, after the attempts it carries. */
    public static long attempt(Entry e) {
        return WireFormat.attemptsBefore(e.fields()) + e.deliveries();
    }

    /**
     * Runs chunks until close: it ends when the queue is drained after {@link #drain}, or at {@link #stop}, and
     * for no other reason. An interrupt that reaches the wait for work (a handler's flag is cleared after
     * each call, so it came from outside, e.g. a shut-down executor) does not end it either: a runner that
     * ended early would never be replaced, and the consumer would keep its entries without running them.
     */
    private void runner() {
        try {
            boolean helped = false;
            while (!stopped) {
                Chunk chunk;
                try {
                    // After helping with another runner's chunk, look for new work without waiting, then help on.
                    chunk = helped ? queue.poll() : queue.poll(IDLE_POLL_MILLIS, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    log.debug("{}: a handler runner was interrupted while waiting for work; it runs on",
                            ctx.describe());
                    continue;
                }
                if (chunk == WAKE_UP) {
                    // Queued behind every chunk, and nothing is queued after it: the work is taken, but entries
                    // may still wait in chunks other runners are on.
                    while (helpOut()) {
                        // until every chunk begun is taken
                    }
                    return;
                }
                if (chunk != null) {
                    runChunk(chunk);
                    helped = false;
                } else {
                    helped = helpOut();
                    if (!helped && draining && queue.isEmpty()) {
                        // A chunk queued just before the drain began, after this poll gave up, is run first.
                        return;
                    }
                }
            }
        } catch (Throwable unexpected) {
            log.error("{}: a handler runner ended unexpectedly", ctx.describe(), unexpected);
            listener.onLoopError("handler runner " + ctx.describe(), unexpected);
        } finally {
            runnersDone.countDown();
        }
    }

    private void runChunk(Chunk chunk) {
        if (batchHandler != null) {
            runBatch(chunk.takeRest());
            return;
        }
        boolean shared = ctx.options().concurrency() > 1 && chunk.deliveries.size() > 1;
        if (shared) {
            begun.add(chunk);
        }
        try {
            for (HeldDelivery h = chunk.take(); h != null; h = chunk.take()) {
                runTaken(h);
            }
        } finally {
            if (shared) {
                begun.remove(chunk);
            }
        }
    }

    /** Runs one entry of a chunk another runner is on, if one is left; true if it ran one. */
    private boolean helpOut() {
        for (Chunk chunk : begun) {
            HeldDelivery h = chunk.take();
            if (h != null) {
                runTaken(h);
                return true;
            }
        }
        return false;
    }

    /**
     * Takes the entry's turn among the bus's handlers, records its start and runs it. An entry that close keeps from
     * starting (it gave up, or came while this runner waited for its turn) stays pending, unheld, its start uncounted.
     */
    private void runTaken(HeldDelivery h) {
        if (lostWhileQueued(h)) {
            return;
        }
        int turn = stopped ? BatchCall.NEW : takeTurn(List.of(h));
        if (turn == BatchCall.NEW) {
            unhold(List.of(h));
            return;
        }
        try {
            if (turn == BatchCall.ALONE) {
                // Not set aside: it keeps its turn to run alone while its record is on the wire. Set aside, it would
                // give the turn up with its start counted once the record lands, and another that must run alone
                // (the poison) could take the turn and kill the process first: a start counted that never ran, one
                // too many for an entry whose last run is this one.
                if (!h.hold().startSent()) { // one set aside before, beside the others, is counted already
                    starts.record(h);
                }
                run(h, true);
                return;
            }
            CompletableFuture<?> recordPending = starts.recordOrSetAside(h);
            if (recordPending != null) {
                setAside(h, recordPending);
                return;
            }
            run(h, false);
        } finally {
            giveBack(turn);
        }
    }

    /**
     * An entry whose start record is not answered yet (its partition's master stalls) waits aside, still held and kept
     * alive, while the runner goes on with other entries; it is queued again once the record is answered or its wait
     * ran out, and then runs without recording its start again.
     */
    private void setAside(HeldDelivery h, CompletableFuture<?> recordPending) {
        log.debug("{}: {} waits aside for its start record", ctx.describe(), h.delivery().streamId());
        recordPending.whenComplete((r, e) -> {
            synchronized (intake) {
                if (!draining && !stopped) {
                    queue.add(new Chunk(new ArrayList<>(List.of(h))));
                    return;
                }
            }
            unhold(List.of(h)); // the close began: it stays pending, for this consumer's next start or a takeover
        });
    }

    private void run(HeldDelivery h, boolean alone) {
        long started = System.nanoTime();
        Throwable failure = null;
        try {
            handler.handle(h.delivery());
        } catch (Throwable t) {
            failure = t;
        }
        clearInterrupt();
        outcomes.settle(h, failure, started, alone);
    }

    /**
     * A batch handler's call. Its deliveries start with the call (their starts recorded before it, and it runs alone
     * if one of them must), unless the handler starts each one itself ({@link BatchHandler#startsEachDelivery}).
     */
    private void runBatch(List<HeldDelivery> taken) {
        if (stopped) {
            unhold(taken);
            return;
        }
        List<HeldDelivery> chunk = new ArrayList<>(taken.size());
        for (HeldDelivery h : taken) {
            if (!lostWhileQueued(h)) {
                chunk.add(h);
            }
        }
        if (chunk.isEmpty()) {
            return;
        }
        List<Delivery> deliveries = new ArrayList<>(chunk.size());
        chunk.forEach(h -> deliveries.add(h.delivery()));
        long started = System.nanoTime(); // each delivery of the batch is timed from the call's start to its settling
        if (batchHandler.startsEachDelivery()) {
            call(new BatchCall(deliveries, (i, failure, as) -> settleStartedOne(chunk.get(i), failure, started, as),
                    new BatchCall.Starter() {
                        @Override
                        public int start(int i) {
                            return startOne(chunk.get(i));
                        }

                        @Override
                        public void release(int i, int as) {
                            giveBack(as);
                        }
                    }));
            return;
        }
        int turn = takeTurn(chunk);
        if (turn == BatchCall.NEW) {
            unhold(chunk);
            return;
        }
        try {
            starts.record(chunk);
            boolean alone = turn == BatchCall.ALONE;
            call(new BatchCall(deliveries, (i, failure, as) -> outcomes.settle(chunk.get(i), failure, started, alone),
                    null));
        } finally {
            giveBack(turn);
        }
    }

    private void call(BatchCall call) {
        Throwable failure = null;
        try {
            batchHandler.handle(call);
        } catch (Throwable t) {
            failure = t;
        }
        clearInterrupt();
        call.settleRest(failure);
    }

    /** {@link dev.runbus.Batch#starting} of a handler that starts each delivery: its turn, then its start record. */
    private int startOne(HeldDelivery h) {
        if (!inFlight.holds(h.hold())) {
            throw new IllegalStateException("delivery " + h.delivery().streamId() + " of " + ctx.describe()
                    + " is no longer held here (its claim was lost, or the entry deleted); it was not started");
        }
        int turn = stopped ? BatchCall.NEW : takeTurn(List.of(h));
        if (turn == BatchCall.NEW) {
            throw new IllegalStateException("the subscription " + ctx.describe() + " is closing; delivery "
                    + h.delivery().streamId() + " was not started");
        }
        try {
            starts.recordAwaited(h);
        } catch (RuntimeException unexpected) {
            giveBack(turn);
            throw unexpected;
        }
        return turn;
    }

    /**
     * Settles a delivery of a handler that starts each one: one that fails without having been started counts as
     * started (its start is recorded first); its turn is given back once its outcome is applied.
     */
    private void settleStartedOne(HeldDelivery h, Throwable failure, long started, int as) {
        try {
            if (as == BatchCall.NEW && failure != null && !stopped) {
                starts.record(h);
            }
            outcomes.settle(h, failure, started, as == BatchCall.ALONE);
        } finally {
            giveBack(as);
        }
    }

    /**
     * Whether the entry's hold went while it waited in the queue (the keep-alive found its claim lost, or the entry
     * deleted and acked it): the entry is another delivery's now, or gone, and its handler must not start. Its slot
     * is freed; there is no hold to release and no outcome to apply.
     */
    private boolean lostWhileQueued(HeldDelivery h) {
        if (inFlight.holds(h.hold())) {
            return false;
        }
        log.debug("{}: {} was no longer held when its turn came; its handler does not start", ctx.describe(),
                h.delivery().streamId());
        h.slots().release(1);
        return true;
    }

    /**
     * Waits for the turn of entries about to start: {@link BatchCall#ALONE} when one of them was started
     * {@code maxDeliveries} times without an outcome and the bus's other handlers finished within {@code minIdle};
     * {@link BatchCall#BESIDE} otherwise; {@link BatchCall#NEW} if close came first.
     */
    private int takeTurn(List<HeldDelivery> entries) {
        HeldDelivery last = null;
        for (HeldDelivery h : entries) {
            if (ctx.options().ackMode() == AckMode.AFTER_WORK && policy.runsAlone(h.delivery().attempt())) {
                last = h;
            }
        }
        if (last == null) {
            return gate.enter(() -> stopped) ? BatchCall.BESIDE : BatchCall.NEW;
        }
        log.warn("{}: {} was started {} times without an outcome (its process died, or lost it); it runs once more, "
                + "alone among the bus's handlers", ctx.describe(), last.delivery().streamId(),
                last.delivery().attempt() - 1);
        Boolean alone = gate.enterAlone(aloneWaitNanos, () -> stopped);
        if (alone == null) {
            return BatchCall.NEW;
        }
        if (!alone) {
            log.warn("{}: other handlers of the bus still ran after {}; {} runs beside them", ctx.describe(),
                    ctx.options().minIdle(), last.delivery().streamId());
        }
        return alone ? BatchCall.ALONE : BatchCall.BESIDE;
    }

    private void giveBack(int turn) {
        if (turn == BatchCall.ALONE) {
            gate.exitAlone();
        } else if (turn == BatchCall.BESIDE) {
            gate.exit();
        }
    }

    /**
     * A handler may leave its thread's interrupt flag set (interrupt-then-throw, or a watchdog racing its
     * return). The flag belongs to that call: left set, it would fail the next delivery for nothing and end
     * the runner's wait for work.
     */
    public static void clearInterrupt() {
        if (Thread.interrupted()) {
            log.debug("cleared the interrupt flag a handler left set");
        }
    }

    /** Entries that will not run: they stay pending in Redis, no longer held here. Returns how many. */
    private int unhold(List<HeldDelivery> held) {
        for (HeldDelivery h : held) {
            inFlight.release(h.hold());
            h.slots().release(1);
        }
        return held.size();
    }

    /** Lets queued and running handlers finish; returns false if they did not within the timeout. */
    boolean drain(long timeoutMillis) throws InterruptedException {
        synchronized (intake) {
            draining = true;
        }
        for (int i = 0; i < ctx.options().concurrency(); i++) {
            queue.add(WAKE_UP);
        }
        return !started || runnersDone.await(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * After a drain timed out: no queued entry starts, and no outcome is applied to handlers still running
     * (their entries stay pending, whatever the handler does after this). Returns how many entries it let go
     * of: queued, or in a chunk a runner is on and not yet started.
     */
    int stop() {
        stopped = true;
        List<Chunk> dropped = new ArrayList<>();
        queue.drainTo(dropped);
        dropped.addAll(begun); // their entries not taken yet: a runner still in a handler would start them later
        int count = 0;
        for (Chunk chunk : dropped) {
            count += unhold(chunk.takeRest());
        }
        return count;
    }

    private static String text(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }
}
