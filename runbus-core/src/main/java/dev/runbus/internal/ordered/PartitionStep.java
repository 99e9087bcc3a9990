package dev.runbus.internal.ordered;

import dev.runbus.Delivery;
import dev.runbus.Handler;
import dev.runbus.Message;
import dev.runbus.Outcome;
import dev.runbus.internal.consume.DeadLetterMover;
import dev.runbus.internal.consume.Dispatcher;
import dev.runbus.internal.consume.HandlerGate;
import dev.runbus.internal.consume.OutcomePolicy;
import dev.runbus.internal.consume.ReadLoop;
import dev.runbus.internal.consume.SubscriptionContext;
import dev.runbus.internal.redis.Entry;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.WireFormat;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.BusMeters;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One step of an ordered partition: claim a page of what is pending, deliver a failed entry again, or run the
 * handler on the next entry and settle it. Handlers of a partition run one at a time, in stream order; an
 * entry's fenced ack is sent without waiting, and the next entry of the same key starts only once that ack is
 * known to be applied ({@link AckWindow}). A dead-letter move is awaited before the partition goes on. So after a
 * crash or a lost lease the next owner runs again only entries whose acks never landed, in order, and never an
 * entry of a key after a later entry of that key ran.
 *
 * <p>A fenced call refused means another consumer owns the partition now: the partition ends here at once. A
 * Redis error ends nothing: the partition starts over from its pending entries (the entry that was running
 * may run again, in order) after a pause; a missing group (Redis lost its data) is created again first.
 */
final class PartitionStep {

    private static final Logger log = LoggerFactory.getLogger(PartitionStep.class);
    private static final long PAUSE_AFTER_ERROR_MILLIS = 1000;
    /** How long an owed retry record waits before it is written again. */
    private static final long REWRITE_PAUSE_MILLIS = 200;

    /** What a step needs besides the partition. */
    record Parts(SubscriptionContext ctx, Handler handler, OrderedScripts scripts, DeadLetterMover deadLetters,
                 PartitionOwnership ownership, SafeListener listener, ScheduledExecutorService timer, Keys keys,
                 ReadLoop.GroupCreator groups, HandlerGate gate) {
    }

    private final SubscriptionContext ctx;
    private final Handler handler;
    private final OrderedScripts scripts;
    private final DeadLetterMover deadLetters;
    private final PartitionOwnership ownership;
    private final OutcomePolicy policy;
    private final SafeListener listener;
    private final ScheduledExecutorService timer;
    private final Keys keys;
    private final ReadLoop.GroupCreator groups;
    /** The bus's handlers' turns: an entry started {@code maxDeliveries} times without an outcome runs alone. */
    private final HandlerGate gate;
    /** Told when a partition caught up or ran dry, so that the read loop reads it. */
    private final IntConsumer wantsNew;
    /** Queues a partition that may have a step to run. */
    private final Consumer<OwnedPartition> offer;

    PartitionStep(Parts parts, IntConsumer wantsNew, Consumer<OwnedPartition> offer) {
        this.ctx = parts.ctx();
        this.handler = parts.handler();
        this.scripts = parts.scripts();
        this.deadLetters = parts.deadLetters();
        this.ownership = parts.ownership();
        this.policy = new OutcomePolicy(ctx.options().maxDeliveries());
        this.listener = parts.listener();
        this.timer = parts.timer();
        this.keys = parts.keys();
        this.groups = parts.groups();
        this.gate = parts.gate();
        this.wantsNew = wantsNew;
        this.offer = offer;
    }

    /**
     * Runs one step if the partition has one to run; never throws. Returns true when the partition has another
     * step to run and is scheduled for the caller ({@link OwnedPartition#schedule}), which runs it or queues it.
     */
    boolean run(OwnedPartition p) {
        OwnedPartition.Step step = p.begin();
        if (step == null) {
            return false;
        }
        boolean pause = false;
        try {
            switch (step.kind()) {
                case CATCH_UP -> catchUp(p, step);
                case RETRY -> retry(p, step);
                case HANDLE -> handle(p, step, p.head());
                default -> throw new IllegalStateException("unknown step " + step);
            }
        } catch (OrderedScripts.Fenced fenced) {
            ownership.lost(p, fenced.getMessage());
        } catch (Throwable e) {
            log.warn("{}: partition {} failed a step; starting over from its pending entries in {} ms", ctx.describe(),
                    p.number, PAUSE_AFTER_ERROR_MILLIS, e);
            listener.onLoopError("partition " + p.name + " of " + ctx.describe(), e);
            recreateMissingGroup(p, e);
            p.startOver();
            p.pause();
            pause = true;
        } finally {
            p.finish();
        }
        if (pause) {
            later(p, PAUSE_AFTER_ERROR_MILLIS);
        }
        ownership.handOverIfIdle(p);
        if (p.queued() == 0) {
            wantsNew.accept(p.number);
        }
        return p.schedule();
    }

    /**
     * Claims the next page of pending entries. The first page waits for the acks still on their way, so that it
     * does not claim (and run again) what they are acking; if its head waits for a retry (a previous owner's
     * failure), the partition waits as long as Redis says. Only entries whose handler started since they were
     * last counted count a delivery (ordered_claim.lua).
     */
    private void catchUp(OwnedPartition p, OwnedPartition.Step step) throws OrderedScripts.Fenced {
        boolean first = p.catchUpStarts();
        if (first) {
            try {
                p.acks.awaitAll();
            } catch (RuntimeException e) {
                log.debug("{}: an ack of partition {} failed before catching up; its entry is claimed again",
                        ctx.describe(), p.number, e);
            }
        }
        OrderedScripts.Claimed page = scripts.claim(p.number, p.name, p.holder, p.catchUpFrom(), "+",
                p.catchUpSkip(), ctx.options().batchSize(), first);
        if (page.mustWait()) {
            waitForHead(p, page.waitMillis());
            return;
        }
        reportTrimmed(p, page.trimmed());
        p.caughtUp(step, page);
    }

    /**
     * Delivers the failed head entry again (one more delivery in the PEL), then runs it; while its retry is not
     * due by the Redis clock, waits on.
     */
    private void retry(OwnedPartition p, OwnedPartition.Step step) throws OrderedScripts.Fenced {
        Entry waiting = p.head();
        OrderedScripts.Claimed again = scripts.claim(p.number, p.name, p.holder, waiting.streamId(),
                waiting.streamId(), "", 1, true);
        if (again.mustWait()) {
            waitForHead(p, again.waitMillis());
            return;
        }
        reportTrimmed(p, again.trimmed());
        List<Entry> entries = again.entries();
        if (entries.isEmpty()) {
            p.done(step); // no longer pending (acked by an operator, or trimmed): nothing left to retry
            return;
        }
        p.redelivered(step, entries.get(0));
        handle(p, step, entries.get(0));
    }

    private void handle(OwnedPartition p, OwnedPartition.Step step, Entry e) throws OrderedScripts.Fenced {
        String key = WireFormat.text(e.fields().get(WireFormat.KEY), null);
        String forGroup = WireFormat.text(e.fields().get(WireFormat.FOR_GROUP), null);
        if (forGroup != null && !forGroup.equals(ctx.group())) {
            p.acks.add(key, scripts.ack(p.name, p.holder, e.streamId()));
            p.done(step);
            return;
        }
        String id = ctx.qualify(p.number, e.streamId());
        long attempt = Dispatcher.attempt(e);
        if (policy.isAbandoned(attempt)) {
            deadLetter(p, step, e, WireFormat.decodeOrPlaceholder(id, e),
                    OutcomePolicy.abandonedReason(attempt, e.previousOwner()));
            return;
        }
        Message message;
        try {
            message = WireFormat.decode(id, e.fields());
        } catch (RuntimeException bad) {
            deadLetter(p, step, e, WireFormat.placeholder(id), "cannot decode entry: " + bad.getMessage());
            return;
        }
        p.acks.awaitBefore(key); // the previous entry of this key is acked before this one runs
        Boolean alone = takeTurn(p, e, attempt);
        if (alone == null || !p.mayStart()) {
            // The lease may have passed on meanwhile: leave the entry to the next owner, or to this one after a
            // renewal (which queues the partition again).
            giveBack(alone);
            return;
        }
        try {
            recordStart(p, e);
            run(p, step, e, key, new Delivery(message, ctx.topic(), id, ctx.group(), ctx.consumer(), e.deliveries(),
                    p.token, attempt), alone);
        } finally {
            giveBack(alone);
        }
    }

    /**
     * Waits for the entry's turn among the bus's handlers: alone (true) for an entry started {@code maxDeliveries}
     * times without an outcome, when the others finish within {@code minIdle}; beside them (false) otherwise; null if
     * the partition may no longer start work meanwhile.
     */
    private Boolean takeTurn(OwnedPartition p, Entry e, long attempt) {
        if (!policy.runsAlone(attempt)) {
            return gate.enter(() -> !p.mayStart()) ? Boolean.FALSE : null;
        }
        log.warn("{}: {} of partition {} was started {} times without an outcome (its process died, or lost it); it"
                + " runs once more, alone among the bus's handlers", ctx.describe(), e.streamId(), p.number,
                attempt - 1);
        return gate.enterAlone(ctx.options().minIdle().toNanos(), () -> !p.mayStart());
    }

    private void giveBack(Boolean alone) {
        if (alone == null) {
            return;
        }
        if (alone) {
            gate.exitAlone();
        } else {
            gate.exit();
        }
    }

    /** Runs the handler on the entry and applies its outcome; an entry that ran alone has its ack awaited. */
    private void run(OwnedPartition p, OwnedPartition.Step step, Entry e, String key, Delivery d, boolean alone)
            throws OrderedScripts.Fenced {
        long started = System.nanoTime();
        Throwable failure = null;
        try {
            handler.handle(d);
        } catch (Throwable t) {
            failure = t;
        }
        Dispatcher.clearInterrupt();
        Outcome outcome = policy.afterHandler(d.attempt(), failure);
        listener.meters().handled(ctx.topic(), ctx.group(), BusMeters.outcome(outcome), System.nanoTime() - started);
        switch (outcome) {
            case ACK -> {
                CompletableFuture<Long> acked = scripts.ack(p.name, p.holder, e.streamId()).whenComplete((n, failed) -> {
                    if (n != null && n == 1) {
                        listener.meters().acked(ctx.topic(), ctx.group(), 1);
                    }
                });
                p.acks.add(key, acked);
                if (alone) {
                    // the bus's other handlers start again once it is applied: a process that dies right then does
                    // not count one more start of an entry whose handler succeeded (a failed ack is reported by the
                    // acks' window, and the entry runs again under the next catching up)
                    try {
                        acked.get(p.acks.timeoutMillis(), TimeUnit.MILLISECONDS);
                    } catch (InterruptedException interrupted) {
                        Thread.currentThread().interrupt();
                    } catch (ExecutionException | TimeoutException notApplied) {
                        log.debug("{}: the ack of {} on {} was not answered", ctx.describe(), e.streamId(), p.name);
                    }
                }
                p.done(step);
            }
            case RETRY -> {
                listener.onHandlerFailure(d, failure, outcome);
                // Retried in place, holding the partition: no later entry of it runs first (docs/architecture.md).
                // The due time is kept in Redis, so that a next owner waits for it too.
                long delay = ctx.options().retryDelay(d).toMillis();
                recordRetry(p, e, delay);
                p.waitForRetry(step);
                later(p, delay);
            }
            case DEAD_LETTER -> {
                listener.onHandlerFailure(d, failure, outcome);
                deadLetter(p, step, e, d.message(), OutcomePolicy.failureReason(failure));
            }
            default -> throw new IllegalStateException("unknown outcome " + outcome);
        }
    }

    /**
     * Records that a handler starts on the entry, so that a next catching up counts this start (a crash in the
     * handler must count). Sent without waiting for an entry read on its first delivery, on the connection of the
     * claims, which keeps it before any later claim; awaited for an entry delivered before or claimed (taken over,
     * retried, caught up on after a crash), the one a crash loop would be made of: a record lost with a process that
     * died at once leaves a claimed entry at its first delivery, and it must not be lost again. So is an entry that
     * carries attempts from before (a replayed or republished message that ran already): only a message's first start
     * may go unawaited.
     *
     * <p>A record that times out or fails is reported and the handler starts all the same: a record that timed out
     * may still run, and a start that never happened must not be counted by the next catching up (a step given up
     * here would leave the record armed and count one). A record not made only lets the entry run once more.
     */
    private void recordStart(OwnedPartition p, Entry e) throws OrderedScripts.Fenced {
        CompletableFuture<Long> sent = scripts.started(p.name, p.holder, e.streamId());
        if (e.deliveries() > 1 || !e.fresh() || WireFormat.attemptsBefore(e.fields()) > 0) {
            Long r;
            try {
                r = sent.get(p.acks.timeoutMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt(); // kept for the runner, which clears it after the handler
                return;
            } catch (ExecutionException | TimeoutException notAnswered) {
                listener.onLoopError("recording the start of " + e.streamId() + " on " + p.name + " of "
                        + ctx.describe(), notAnswered);
                return;
            }
            if (r != null && r < 0) {
                throw new OrderedScripts.Fenced(p.name);
            }
        }
    }

    /**
     * Records the retry's due time in Redis. If Redis cannot be told, this owner still waits its delay, keeps the
     * partition (a voluntary hand-over waits) and writes the record again until it is written or the delay passed:
     * a next owner without it would retry at once. Only a death of this owner meanwhile could retry sooner
     * (docs/architecture.md).
     */
    private void recordRetry(OwnedPartition p, Entry e, long delayMillis) throws OrderedScripts.Fenced {
        long due = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis);
        boolean held;
        try {
            held = scripts.retryAt(p.name, p.holder, e.streamId(), delayMillis);
        } catch (RuntimeException failed) {
            listener.onLoopError("recording the retry of " + e.streamId() + " on " + p.name + " of " + ctx.describe(),
                    failed);
            p.oweRetryRecord(e.streamId(), due);
            rewriteRetry(p, e.streamId(), due);
            return;
        }
        if (!held) {
            throw new OrderedScripts.Fenced(p.name);
        }
    }

    /** Writes an owed retry record again after a pause, without holding a thread, until written or no longer due. */
    private void rewriteRetry(OwnedPartition p, String streamId, long due) {
        try {
            timer.schedule(() -> {
                long nanosLeft = due - System.nanoTime();
                // Rounded up: the record must not expire before the retry is due (truncating let the next owner
                // run it up to a millisecond early).
                long left = nanosLeft <= 0 ? 0 : (nanosLeft + 999_999) / 1_000_000;
                if (p.isEnded() || left <= 0) {
                    p.retryRecorded();
                    ownership.handOverIfIdle(p);
                    return;
                }
                CompletableFuture<Long> sent;
                try {
                    sent = scripts.retryAtAsync(p.name, p.holder, streamId, left);
                } catch (RuntimeException failed) {
                    sent = CompletableFuture.failedFuture(failed);
                }
                sent.whenComplete((r, failed) -> {
                    if (failed != null) {
                        rewriteRetry(p, streamId, due);
                    } else {
                        p.retryRecorded(); // written, or fenced off: the partition is another's now
                        ownership.handOverIfIdle(p);
                    }
                });
            }, REWRITE_PAUSE_MILLIS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            p.retryRecorded(); // the subscription is closing: nothing left to keep the partition for
        }
    }

    /** The head waits for its retry, by the Redis clock: hold the partition that long, then catch up again. */
    private void waitForHead(OwnedPartition p, long millis) {
        p.pause();
        later(p, millis);
    }

    /** Moves the entry to the partition's dead letters and waits for the move: the partition goes on after it. */
    private void deadLetter(OwnedPartition p, OwnedPartition.Step step, Entry e, Message message, String reason)
            throws OrderedScripts.Fenced {
        String result;
        try {
            result = deadLetters.moveNow(new DeadLetterMover.Move(p.number, e.streamId(), Dispatcher.attempt(e), message,
                    reason, new Scripts.Fence(keys.lease(p.name, ctx.group()), p.holder), () -> { }));
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while dead-lettering " + e.streamId(), interrupted);
        } catch (Exception failed) {
            throw new IllegalStateException("dead-lettering " + e.streamId() + " failed: " + failed.getMessage(), failed);
        }
        if ("fenced".equals(result)) {
            throw new OrderedScripts.Fenced(p.name);
        }
        p.done(step);
    }

    /** The group is gone (Redis lost its data, or the stream was deleted): create it again, as the read loop does. */
    private void recreateMissingGroup(OwnedPartition p, Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (String.valueOf(t.getMessage()).contains("NOGROUP")) {
                try {
                    groups.ensureGroup(p.name, ctx.group());
                } catch (RuntimeException again) {
                    log.warn("{}: cannot create group {} on {} again", ctx.describe(), ctx.group(), p.name, again);
                }
                return;
            }
        }
    }

    /** Lets the partition go on after {@code millis}; after close, when the timer is gone, it does not. */
    private void later(OwnedPartition p, long millis) {
        try {
            timer.schedule(() -> {
                p.retryDue();
                offer.accept(p);
            }, millis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            log.debug("{}: partition {} not resumed: the subscription is closing", ctx.describe(), p.number);
        }
    }

    private void reportTrimmed(OwnedPartition p, List<String> trimmed) {
        if (!trimmed.isEmpty()) {
            listener.onTrimmedWhilePending(ctx.topic(), ctx.group(), ctx.qualify(p.number, trimmed));
        }
    }
}
