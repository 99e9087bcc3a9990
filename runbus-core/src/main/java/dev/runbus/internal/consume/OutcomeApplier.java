package dev.runbus.internal.consume;

import dev.runbus.AckMode;
import dev.runbus.Delivery;
import dev.runbus.Message;
import dev.runbus.Outcome;
import dev.runbus.internal.redis.Slots;
import dev.runbus.internal.telemetry.BusMeters;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What happens to an entry after its handler: the outcome {@link OutcomePolicy} decides (ack, retry, dead
 * letter) is applied, its hold released and its slot freed. The dispatcher's runners call it; so does its intake,
 * for entries dead-lettered before any handler (abandoned, undecodable).
 */
final class OutcomeApplier {

    private static final Logger log = LoggerFactory.getLogger(OutcomeApplier.class);

    private final SubscriptionContext ctx;
    private final OutcomePolicy policy;
    private final InFlight inFlight;
    private final Acker acker;
    private final DeadLetterMover deadLetters;
    private final Retrier retrier;
    private final SafeListener listener;
    /** True once close gave up waiting: no outcome is applied from then on. */
    private final BooleanSupplier stopped;
    /** Whose replies a dead letter or a reschedule waits for, so that the start record never outlives its entry. */
    private final StartRecorder starts;
    /** Per-key caps, when the subscription sets a flow cap (a settled entry gives its slot back); else null. */
    private final FlowControl flow;

    OutcomeApplier(SubscriptionContext ctx, OutcomePolicy policy, InFlight inFlight, Acker acker,
                   DeadLetterMover deadLetters, Retrier retrier, SafeListener listener, BooleanSupplier stopped,
                   StartRecorder starts, FlowControl flow) {
        this.starts = starts;
        this.flow = flow;
        this.ctx = ctx;
        this.policy = policy;
        this.inFlight = inFlight;
        this.acker = acker;
        this.deadLetters = deadLetters;
        this.retrier = retrier;
        this.listener = listener;
        this.stopped = stopped;
    }

    /**
     * After the handler: its outcome is applied, its slot is freed (for a dead letter, once the move is made) and its
     * hold released: for an ack once the ack is answered (until then the entry is kept alive, and a claim of it by this
     * consumer's reclaimer is not run again), for the others at once. Never throws: a failure here leaves the entry
     * pending.
     *
     * <p>No outcome is applied when this delivery's hold was gone: its claim was lost (the keep-alive reported
     * it) or the entry was deleted. The entry is then another delivery's, possibly a newer one of this very
     * consumer, which acks or dead-letters it itself.
     */
    void settle(HeldDelivery h, Throwable failure, long startedNanos, boolean ranAlone) {
        Delivery d = h.delivery();
        boolean stillHeld = inFlight.settle(h.hold());
        boolean slotHandedOver = false;
        try {
            if (!stillHeld) {
                log.debug("{}: {} was no longer held by this delivery when its handler ended; no outcome applied",
                        ctx.describe(), d.streamId());
            } else if (stopped.getAsBoolean()) {
                inFlight.release(h.hold());
            } else {
                slotHandedOver = finish(h, failure, startedNanos, ranAlone);
            }
        } catch (Throwable unexpected) {
            inFlight.release(h.hold());
            log.error("{}: failure while finishing {}; it stays pending", ctx.describe(), d.streamId(), unexpected);
        } finally {
            if (!slotHandedOver) {
                h.slots().release(1);
            }
        }
    }

    /**
     * Applies the one decision of {@link OutcomePolicy#afterHandler} and releases the hold (an ack's when it is
     * answered). Returns true when the entry's slot went with a dead-letter move or a reschedule, which releases it.
     * The ack of an entry that ran alone is awaited ({@link Acker#ackAwaited}).
     */
    private boolean finish(HeldDelivery h, Throwable failure, long startedNanos, boolean ranAlone) {
        Delivery d = h.delivery();
        InFlight.Hold entry = h.hold();
        long nanos = System.nanoTime() - startedNanos;
        if (ctx.options().ackMode() == AckMode.BEFORE_WORK) {
            inFlight.release(entry);
            listener.meters().handled(ctx.topic(), ctx.group(), failure == null ? BusMeters.SUCCESS : BusMeters.FAILURE,
                    nanos);
            if (failure != null) {
                listener.onHandlerFailure(d, failure, Outcome.ACK);
            }
            return false;
        }
        Outcome outcome = policy.afterHandler(d.attempt(), failure);
        listener.meters().handled(ctx.topic(), ctx.group(), BusMeters.outcome(outcome), nanos);
        if (outcome != Outcome.ACK) {
            inFlight.release(entry); // a retry must go idle to be taken over; a dead letter's move acks it
        }
        switch (outcome) {
            case ACK:
                entry.handlerMillis(nanos / 1e6); // fair shares by handler time correct the key's charge by it
                if (ranAlone) {
                    acker.ackAwaited(entry.partition(), entry.streamId(), entry.startRecorded());
                    inFlight.release(entry);
                    releaseSlot(entry);
                } else {
                    starts.withdrawFirstStart(entry); // handled before its record left: no need to count it
                    // The flow slot goes once the ack is answered, not beside it: given back earlier, it let the
                    // key's next message start (under a cap of 1, a poison that killed the process) before this
                    // entry's ack reached Redis, and the entry ran again after the takeover (loaded run 85).
                    acker.ack(entry.partition(), entry.streamId(), entry.startRecorded(), entry.startRecordSent(),
                            () -> {
                                inFlight.release(entry);
                                releaseSlot(entry);
                            });
                }
                return false;
            case RETRY:
                listener.onHandlerFailure(d, failure, outcome);
                if (retrier.delays()) { // the entry keeps its slot until the reschedule is answered
                    starts.awaitRecorded(entry);
                    retrier.retryLater(entry.partition(), entry.streamId(), d, () -> {
                        h.slots().release(1);
                        releaseSlot(entry); // the copy waits for a slot again when it is due
                    });
                    return true;
                }
                return false;
            case DEAD_LETTER:
                listener.onHandlerFailure(d, failure, outcome);
                starts.awaitRecorded(entry);
                deadLetter(entry.partition(), entry.streamId(), d.attempt(), d.message(),
                        OutcomePolicy.failureReason(failure), h.slots(), entry.flowKey());
                return true;
            default:
                throw new IllegalStateException("unknown outcome " + outcome);
        }
    }

    /**
     * Queues the move; the entry keeps its slot until the move is made, and its flow slot ({@code flowKey}, null
     * without one) until then too.
     */
    void deadLetter(int partition, String streamId, long deliveries, Message message, String reason,
                            Slots slots, String flowKey) {
        deadLetters.move(new DeadLetterMover.Move(partition, streamId, deliveries, message, reason, null, () -> {
            slots.release(1);
            if (flow != null) {
                flow.release(partition, flowKey, streamId);
            }
        }));
    }

    /**
     * Gives the entry's flow slot back once its outcome was answered. A retry on idle keeps it: the entry stays in
     * the stream and its next delivery confirms the same hold (or, expired and reaped meanwhile, takes another).
     */
    private void releaseSlot(InFlight.Hold entry) {
        if (flow != null) {
            flow.release(entry);
        }
    }
}
