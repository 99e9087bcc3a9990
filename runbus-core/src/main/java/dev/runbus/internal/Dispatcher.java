package dev.runbus.internal;

import dev.runbus.AckMode;
import dev.runbus.Delivery;
import dev.runbus.Handler;
import dev.runbus.Message;
import dev.runbus.Outcome;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Runs the handler on entries the read loop and the reclaimer hand over, {@code concurrency} at a time, and
 * applies the outcome. Every entry arrives holding one {@link Slots slot}, released when it is finished.
 *
 * <p>{@code concurrency} runner tasks pull from a local queue; on the default executor each is a platform
 * thread, on a virtual-thread executor each is a virtual thread.
 */
final class Dispatcher {

    private final SubscriptionContext ctx;
    private final Handler handler;
    private final OutcomePolicy policy;
    private final Slots slots;
    private final InFlight inFlight;
    private final Acker acker;
    private final DeadLetterMover deadLetters;
    private final SafeListener listener;
    private final BlockingQueue<Delivery> queue = new LinkedBlockingQueue<>();
    private final CountDownLatch runnersDone;
    private volatile boolean draining;

    Dispatcher(SubscriptionContext ctx, Handler handler, Slots slots, InFlight inFlight, Acker acker,
               DeadLetterMover deadLetters, SafeListener listener) {
        this.ctx = ctx;
        this.handler = handler;
        this.policy = new OutcomePolicy(ctx.options().maxDeliveries());
        this.slots = slots;
        this.inFlight = inFlight;
        this.acker = acker;
        this.deadLetters = deadLetters;
        this.listener = listener;
        this.runnersDone = new CountDownLatch(ctx.options().concurrency());
    }

    void start(Executor executor) {
        for (int i = 0; i < ctx.options().concurrency(); i++) {
            try {
                executor.execute(this::runner);
            } catch (RejectedExecutionException e) {
                throw new IllegalStateException("the executor of " + ctx.describe() + " rejected a handler task", e);
            }
        }
    }

    /** Takes over entries, each holding one slot. */
    void accept(List<Entry> entries) {
        if (entries.isEmpty()) {
            return;
        }
        if (ctx.options().ackMode() == AckMode.BEFORE_WORK) {
            List<String> ids = new ArrayList<>(entries.size());
            entries.forEach(e -> ids.add(e.streamId()));
            acker.ackNow(ids);
        }
        List<String> notOurs = new ArrayList<>();
        for (Entry e : entries) {
            String forGroup = text(e.fields().get(WireFormat.FOR_GROUP));
            if (forGroup != null && !forGroup.equals(ctx.group())) {
                notOurs.add(e.streamId());
                slots.release(1);
            } else if (policy.isAbandoned(e.deliveries()) && ctx.options().ackMode() == AckMode.AFTER_WORK) {
                deadLetter(e.streamId(), e.deliveries(), decodeOrPlaceholder(e),
                        OutcomePolicy.abandonedReason(e.deliveries(), e.previousOwner()));
                slots.release(1);
            } else {
                enqueue(e);
            }
        }
        if (ctx.options().ackMode() == AckMode.AFTER_WORK) {
            notOurs.forEach(acker::ack);
        }
    }

    private void enqueue(Entry e) {
        Message message;
        try {
            message = WireFormat.decode(e.streamId(), e.fields());
        } catch (RuntimeException bad) {
            deadLetter(e.streamId(), e.deliveries(), placeholder(e.streamId()), "cannot decode entry: " + bad.getMessage());
            slots.release(1);
            return;
        }
        inFlight.hold(e.streamId());
        queue.add(new Delivery(message, ctx.topic(), e.streamId(), ctx.group(), ctx.consumer(), e.deliveries()));
    }

    private void runner() {
        try {
            while (true) {
                Delivery d = queue.poll(50, TimeUnit.MILLISECONDS);
                if (d != null) {
                    run(d);
                } else if (draining) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            runnersDone.countDown();
        }
    }

    private void run(Delivery d) {
        Throwable failure = null;
        try {
            handler.handle(d);
        } catch (Throwable t) {
            failure = t;
        }
        // No longer kept alive from here: the outcome is applied within milliseconds.
        inFlight.release(d.streamId());
        try {
            finish(d, failure);
        } finally {
            slots.release(1);
        }
    }

    /** Applies the one decision of {@link OutcomePolicy#afterHandler}. */
    private void finish(Delivery d, Throwable failure) {
        if (ctx.options().ackMode() == AckMode.BEFORE_WORK) {
            if (failure != null) {
                listener.onHandlerFailure(d, failure, Outcome.ACK);
            }
            return;
        }
        Outcome outcome = policy.afterHandler(d.deliveryCount(), failure);
        switch (outcome) {
            case ACK:
                acker.ack(d.streamId());
                break;
            case RETRY:
                listener.onHandlerFailure(d, failure, outcome);
                break;
            case DEAD_LETTER:
                listener.onHandlerFailure(d, failure, outcome);
                deadLetter(d.streamId(), d.deliveryCount(), d.message(), OutcomePolicy.failureReason(failure));
                break;
            default:
                throw new IllegalStateException("unknown outcome " + outcome);
        }
    }

    private void deadLetter(String streamId, long deliveries, Message message, String reason) {
        try {
            deadLetters.move(ctx, streamId, deliveries, message, reason);
        } catch (RuntimeException failed) {
            // The entry stays pending; the reclaimer finds it at the limit and dead-letters it as abandoned.
            listener.onLoopError("dead-letter " + ctx.describe(), failed);
        }
    }

    /** Lets queued and running handlers finish; returns false if they did not within the timeout. */
    boolean drain(long timeoutMillis) throws InterruptedException {
        draining = true;
        return runnersDone.await(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    private static Message decodeOrPlaceholder(Entry e) {
        try {
            return WireFormat.decode(e.streamId(), e.fields());
        } catch (RuntimeException bad) {
            return placeholder(e.streamId());
        }
    }

    /** Stands in for an entry whose fields cannot be decoded; the dead letter keeps the raw fields. */
    private static Message placeholder(String streamId) {
        return Message.builder("", new byte[0]).id(streamId).build();
    }

    private static String text(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }
}
