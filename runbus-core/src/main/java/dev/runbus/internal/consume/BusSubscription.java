package dev.runbus.internal.consume;

import dev.runbus.Subscription;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What every kind of subscription shares: who it is, and the frame of its close. The bus closes all its
 * subscriptions in two passes: all stop taking work first ({@link #stopTakingWork}), so that their handlers
 * drain side by side, then each finishes ({@link #finishClose}). Each pass runs once, and whatever fails in
 * the second, the consumer's name is freed at its end.
 */
public abstract class BusSubscription implements Subscription {

    /** Waits up to a timeout for running handlers; true when they ended. */
    protected interface Drain {
        boolean await(long timeoutMillis) throws InterruptedException;
    }

    public final SubscriptionContext ctx;
    private final Runnable onClosed;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean finished = new AtomicBoolean();

    /** {@code onClosed} runs at the end of the close, whatever failed before. */
    public BusSubscription(SubscriptionContext ctx, Runnable onClosed) {
        this.ctx = ctx;
        this.onClosed = onClosed;
    }

    /** Starts its loops; the bus calls it once. */
    public abstract BusSubscription start();

    /** Stops reading and whatever else takes new work. */
    protected abstract void stopWork();

    /** Lets running handlers finish, then stops the rest and closes its connection. */
    protected abstract void finishWork();

    @Override
    public String topic() {
        return ctx.topic();
    }

    @Override
    public String group() {
        return ctx.group();
    }

    @Override
    public String consumer() {
        return ctx.consumer();
    }

    @Override
    public boolean isReading() {
        return !closed.get() && readLoopAlive();
    }

    /** Whether the read loop's thread is alive. */
    protected abstract boolean readLoopAlive();

    @Override
    public void close() {
        stopTakingWork();
        finishClose();
    }

    /** The first pass. Synchronized with {@link #ifOpen}. */
    public final void stopTakingWork() {
        synchronized (this) {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
        }
        stopWork();
    }

    /** The second pass. */
    public final void finishClose() {
        if (!finished.compareAndSet(false, true)) {
            return;
        }
        try {
            finishWork();
        } finally {
            onClosed.run(); // whatever failed above, the name is freed and no longer kept alive
        }
    }

    /** Runs {@code start} unless the close began; a loop started so cannot miss the close. */
    protected final synchronized void ifOpen(Runnable start) {
        if (!closed.get()) {
            start.run();
        }
    }

    /** Waits for the handlers up to {@code shutdownTimeout}; false if they did not end (or the wait was interrupted). */
    protected final boolean drain(Drain drain) {
        try {
            return drain.await(ctx.options().shutdownTimeout().toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
