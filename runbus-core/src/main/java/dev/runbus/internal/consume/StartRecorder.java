package dev.runbus.internal.consume;

import dev.runbus.AckMode;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Records each handler start right before it (docs/architecture.md, rule 13: a delivery counts when a handler starts
 * on it), in the entry's partition's start record. The reclaimer and the re-read of a consumer's own pending entries
 * count deliveries from that record, so an entry a process read but never started costs nothing when it dies.
 *
 * <p>An entry read as new gets its first start with a plain {@code HSET} ({@link Scripts#recordFirstStarts}), without
 * waiting, batched with the other first starts of its partition while one is on the wire, and withdrawn if its
 * handler succeeds before it left ({@link FirstStarts}); the others (re-read, claimed, taken back, or read as new too long ago: {@link #isFresh}) with
 * record_starts.lua, which reads their delivery from the pending list, and their handler waits for it. Either way the
 * entry's hold is given the call's reply ({@link InFlight.Hold#startRecorded}), and no outcome of this consumer's takes
 * the entry out of the pending list before the record has run: a field written after the ack that removed it would
 * stay for good. The acker sends an entry's ack behind its record, or after its reply ({@link Acker}); a dead letter
 * or a reschedule waits for the reply on its runner.
 */
final class StartRecorder {

    private final SubscriptionContext ctx;
    private final Scripts scripts;
    private final InFlight inFlight;
    private final SafeListener listener;
    /** How long a runner waits for a redelivered entry's record before it sets the entry aside and runs others. */
    static final long SET_ASIDE_MILLIS = 200;
    /** How long a handler waits for the start record of an entry delivered before (Redis's command timeout). */
    private final long recordTimeoutMillis;
    /**
     * How long after its read an entry's first start may still be sent without the script: half of {@code minIdle},
     * less the command timeout, within which a record sent lands or fails (see {@link #isFresh}).
     */
    private final long freshForNanos;
    /** The first starts of entries read as new, sent in batches ({@link FirstStarts}). */
    private final FirstStarts firstStarts;

    StartRecorder(SubscriptionContext ctx, Scripts scripts, InFlight inFlight, SafeListener listener,
                  long recordTimeoutMillis) {
        this.ctx = ctx;
        this.scripts = scripts;
        this.inFlight = inFlight;
        this.listener = listener;
        this.recordTimeoutMillis = recordTimeoutMillis;
        this.freshForNanos = ctx.options().minIdle().toNanos() / 2 - TimeUnit.MILLISECONDS.toNanos(recordTimeoutMillis);
        this.firstStarts = new FirstStarts(ctx, scripts, listener);
    }

    /**
     * Records one handler start on {@code h}, right before its handler. Without waiting for the message's first start
     * ({@link #firstStart}, with the plain HSET or, read too long ago, the script): a record lost then (the call failed,
     * reported; or the process died before it left) only lets the message be delivered once more. An entry delivered
     * before (re-read, claimed, answered late), or read as new but carrying attempts from before (a retry, an entry put
     * back to wait for its flow slot after it ran), waits for its record (up to the command timeout, then runs anyway): an
     * entry that kills its process each time it runs is counted, and dead-lettered as abandoned, instead of coming
     * back forever.
     */
    void record(HeldDelivery h) {
        if (ctx.options().ackMode() == AckMode.BEFORE_WORK) {
            return;
        }
        if (isFresh(h, System.nanoTime())) {
            recordFirstStart(h);
            return;
        }
        CompletableFuture<?> reply = send(h.hold().partition(), List.of(h), false);
        if (!firstStart(h)) {
            await(reply);
        }
    }

    /**
     * {@link #record(HeldDelivery)} for a handler that starts each delivery itself ({@link dev.runbus.Batch#starting}),
     * which waits for a first start's record too: when it returns, the start is counted in Redis. Such a handler may
     * count the start in a store of its own right after (the runs worker counts an attempt in PostgreSQL), and that
     * count must never run ahead of the bus's: a process that died after the other count but before a first start
     * left would have the bus deliver the entry once more than the other count allows, and a run that only ran beside
     * a poison three times would fail without a fourth, alone, run. The wait is one or two replies of the partition's
     * master (up to the command timeout, then the work starts anyway, as for a redelivered entry).
     */
    void recordAwaited(HeldDelivery h) {
        if (ctx.options().ackMode() == AckMode.BEFORE_WORK) {
            return;
        }
        if (isFresh(h, System.nanoTime())) {
            recordFirstStart(h);
            await(h.hold().firstStart().reply());
            return;
        }
        await(send(h.hold().partition(), List.of(h), false));
    }

    /**
     * {@link #record(HeldDelivery)} for a runner, which must not wait long on one entry while others wait for it (rule 14:
     * a stalled master holds up its own partitions only). Returns null when the handler may start now; for an entry
     * delivered before whose record is not answered within {@value #SET_ASIDE_MILLIS} ms, a future that completes
     * when it is answered, or when the command timeout passed (reported): the runner sets the entry aside, still
     * held, and runs it then, without recording its start again.
     */
    CompletableFuture<?> recordOrSetAside(HeldDelivery h) {
        if (ctx.options().ackMode() == AckMode.BEFORE_WORK) {
            return null;
        }
        if (h.hold().startSent()) { // set aside before: its record's reply came, or the wait for it ended
            return null;
        }
        if (isFresh(h, System.nanoTime())) {
            recordFirstStart(h);
            return null;
        }
        CompletableFuture<?> reply = send(h.hold().partition(), List.of(h), false);
        if (firstStart(h) || awaitUpTo(reply, SET_ASIDE_MILLIS)) {
            return null;
        }
        return reply.handle((r, failure) -> null)
                .orTimeout(Math.max(1, recordTimeoutMillis - SET_ASIDE_MILLIS), TimeUnit.MILLISECONDS)
                .whenComplete((r, timedOut) -> {
                    if (timedOut != null) {
                        listener.onLoopError("record handler starts " + ctx.describe(), new TimeoutException(
                                "no reply to the start record within " + recordTimeoutMillis + " ms"));
                    }
                });
    }

    /** Waits up to {@code millis} for {@code reply}, through an interrupt (kept); true if it came. */
    private static boolean awaitUpTo(CompletableFuture<?> reply, long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        boolean interrupted = false;
        while (!reply.isDone() && deadline - System.nanoTime() > 0) {
            try {
                reply.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException | TimeoutException e) {
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return reply.isDone();
    }

    /**
     * Records one handler start on each delivery of a batch handler's call, before it: one call per partition for its
     * new entries and one for the others, awaited as by {@link #record(HeldDelivery)}.
     */
    void record(List<HeldDelivery> call) {
        if (ctx.options().ackMode() == AckMode.BEFORE_WORK) {
            return;
        }
        Map<Integer, List<HeldDelivery>> fresh = new TreeMap<>();
        Map<Integer, List<HeldDelivery>> again = new TreeMap<>();
        long now = System.nanoTime();
        for (HeldDelivery h : call) {
            (isFresh(h, now) ? fresh : again).computeIfAbsent(h.hold().partition(), p -> new ArrayList<>()).add(h);
        }
        List<CompletableFuture<?>> awaited = new ArrayList<>(again.size());
        fresh.forEach((partition, held) -> send(partition, held, true));
        again.forEach((partition, held) -> {
            CompletableFuture<?> reply = send(partition, held, false);
            if (held.stream().anyMatch(h -> !firstStart(h))) {
                awaited.add(reply);
            }
        });
        if (!awaited.isEmpty()) {
            await(CompletableFuture.allOf(awaited.toArray(new CompletableFuture<?>[0])));
        }
    }

    /**
     * Whether an entry's first start can be written without looking at the pending list: it was read as new, it is
     * still held (not found trimmed meanwhile, which acks it), and so recently that the record lands, or fails, before
     * the entry has been idle in Redis for half of {@code minIdle}, so before another consumer can claim it: it was
     * read less than half of {@code minIdle} ago, less the command timeout. An entry that waited longer here (a
     * process paused between its read and this record), and every entry when the command timeout is half of
     * {@code minIdle} or more, goes through the script, which skips it if it is no longer pending.
     */
    private boolean isFresh(HeldDelivery h, long now) {
        return firstStart(h) && h.hold().sinceRenewed(now) < freshForNanos && inFlight.holds(h.hold());
    }

    /**
     * Whether this is the message's first start ever: its entry was read as new and carries no attempts from before
     * (a rescheduled retry's, or the starts of an entry put back to wait for its flow slot). Only such a start's record
     * may be lost with its process, so a message runs at most once more for it, once: the later starts of a message
     * that kills its process, in whatever entry it has come back as, are each awaited.
     */
    private static boolean firstStart(HeldDelivery h) {
        return h.fresh() && h.delivery().attempt() == 1;
    }

    /** An entry read as new and {@link #isFresh}: its first start goes with its partition's next batch. */
    private void recordFirstStart(HeldDelivery h) {
        h.hold().firstStartIn(firstStarts.add(h.hold().partition(), h.hold().streamId()));
    }

    /**
     * For a handler that succeeded: takes its entry's first start out of its batch if the batch has not left, so that
     * it is never written (the ack removes the entry, and with it any need to count the start) and the ack need not
     * wait for it. A start already on its way stays.
     */
    void withdrawFirstStart(InFlight.Hold entry) {
        FirstStarts.Batch batch = entry.firstStart();
        if (batch != null && firstStarts.withdraw(entry.partition(), entry.streamId(), batch)) {
            entry.firstStartWithdrawn();
        }
    }

    /** Sends one partition's record and gives each hold its reply; a call that could not be sent holds nothing. */
    private CompletableFuture<?> send(int partition, List<HeldDelivery> held, boolean fresh) {
        List<String> ids = new ArrayList<>(held.size());
        held.forEach(h -> ids.add(h.hold().streamId()));
        CompletableFuture<Long> reply;
        try {
            reply = fresh ? scripts.recordFirstStarts(ctx.name(partition), ctx.group(), ids)
                    : scripts.recordStarts(ctx.name(partition), ctx.group(), ids);
        } catch (RuntimeException failure) {
            listener.onLoopError("record handler starts " + ctx.describe(), failure);
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Long> reported = reply.whenComplete((n, failure) -> {
            if (failure != null) {
                listener.onLoopError("record handler starts " + ctx.describe(), failure);
            }
        });
        held.forEach(h -> h.hold().startRecorded(reported));
        return reported;
    }

    /**
     * Waits until the start recorded for {@code entry}'s delivery has been answered, for an outcome whose script takes
     * the entry out of the pending list: a dead letter or a reschedule.
     */
    void awaitRecorded(InFlight.Hold entry) {
        await(entry.startRecorded());
    }

    /**
     * Waits for a record's {@code reply}, up to the command timeout, through an interrupt: what follows (a handler that
     * may kill its process, or a script that takes the entry out of the pending list) must not run ahead of the record.
     * An interrupt is kept for the handler's runner to clear, as a handler's own; a failure was reported where the
     * record was sent, a timeout is reported here.
     */
    private void await(CompletableFuture<?> reply) {
        if (!awaitUpTo(reply, recordTimeoutMillis)) {
            listener.onLoopError("record handler starts " + ctx.describe(),
                    new TimeoutException("no reply to the start record within " + recordTimeoutMillis + " ms"));
        }
    }
}
