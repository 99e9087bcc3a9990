package dev.runbus.internal.consume;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Lets a delivery run alone among the handlers of one bus: no other handler of any of its subscriptions runs
 * while it does (docs/architecture.md, "A poison that kills its process").
 *
 * <p>Why: when a process dies, every handler running in it has had its start counted. An entry that only ran beside
 * the one that killed the process would, after enough deaths, reach {@code maxDeliveries} for it. So an entry started
 * {@code maxDeliveries} times without an outcome runs once more, alone: if the process dies then, it was that entry.
 *
 * <p>Every other handler passes through {@link #enter}/{@link #exit}: one compare-and-set each way while nobody waits
 * to run alone. Deliveries that must run alone take turns, one after another, for as long as the turns before take
 * (each runs one handler, as long as it runs): after a death several may be due at once, the poison among them, and a
 * bound on that wait would let the last ones run beside the poison, which would count their starts again. The one
 * whose turn it is stops new handlers from starting and waits for the running ones to finish, up to a bound (a handler
 * that waits for another one to start would otherwise wait for good); past it, it runs beside them.
 */
public final class HandlerGate {

    /** Set while a delivery runs alone or waits to; the bits below count the handlers running beside each other. */
    private static final int ALONE = 1 << 30;
    private static final int RUNNING = ALONE - 1;
    /** How long a wait sleeps before it looks again (a missed wake-up costs no more than this). */
    private static final long SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final AtomicInteger state = new AtomicInteger();
    /** One delivery at a time runs alone or waits to; a semaphore, since it may end on another thread. */
    private final Semaphore aloneTurn = new Semaphore(1);
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();

    /**
     * Counts one handler running, once no delivery runs alone or waits to. Returns false, having counted nothing, if
     * {@code giveUp} turned true meanwhile (the subscription is closing).
     */
    public boolean enter(BooleanSupplier giveUp) {
        while (true) {
            int s = state.get();
            if ((s & ALONE) == 0) {
                if (state.compareAndSet(s, s + 1)) {
                    return true;
                }
            } else if (giveUp.getAsBoolean()) {
                return false;
            } else {
                awaitChange(() -> (state.get() & ALONE) != 0 && !giveUp.getAsBoolean());
            }
        }
    }

    /** A handler counted by {@link #enter} has finished. */
    public void exit() {
        int s = state.decrementAndGet();
        if ((s & ALONE) != 0 && (s & RUNNING) == 0) {
            signal();
        }
    }

    /**
     * Waits for its turn among the deliveries that run alone (without a bound), then, up to {@code maxWaitNanos},
     * until no other handler runs, and keeps new ones from starting until {@link #exitAlone}. Returns true if the
     * caller runs alone; false if the wait for the running handlers ran out (it then runs beside them, counted as by
     * {@link #enter}). Returns null, having taken nothing, if {@code giveUp} turned true.
     */
    public Boolean enterAlone(long maxWaitNanos, BooleanSupplier giveUp) {
        if (!takeTurn(giveUp)) {
            return null;
        }
        long deadline = System.nanoTime() + maxWaitNanos;
        int s;
        do {
            s = state.get();
        } while (!state.compareAndSet(s, s | ALONE));
        awaitChange(() -> (state.get() & RUNNING) != 0 && deadline - System.nanoTime() > 0 && !giveUp.getAsBoolean());
        if ((state.get() & RUNNING) == 0) {
            return true;
        }
        release();
        return giveUp.getAsBoolean() ? null : enterBeside(giveUp);
    }

    /** A delivery that {@link #enterAlone} let run alone has finished: the others may start again. */
    public void exitAlone() {
        release();
    }

    private Boolean enterBeside(BooleanSupplier giveUp) {
        return enter(giveUp) ? Boolean.FALSE : null;
    }

    /** Waits for the turn to run alone; false if {@code giveUp} turned true first. */
    private boolean takeTurn(BooleanSupplier giveUp) {
        while (!giveUp.getAsBoolean()) {
            try {
                if (aloneTurn.tryAcquire(SLICE_NANOS, TimeUnit.NANOSECONDS)) {
                    return true;
                }
            } catch (InterruptedException e) {
                // a runner ends only on close, which giveUp tells; the handler's own flag is cleared after each call
            }
        }
        return false;
    }

    private void release() {
        int s;
        do {
            s = state.get();
        } while (!state.compareAndSet(s, s & ~ALONE));
        aloneTurn.release();
        signal();
    }

    private void signal() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Waits while {@code waiting} holds, looking again at every signal and at least every slice. */
    private void awaitChange(BooleanSupplier waiting) {
        lock.lock();
        try {
            while (waiting.getAsBoolean()) {
                try {
                    changed.awaitNanos(SLICE_NANOS);
                } catch (InterruptedException e) {
                    // as in takeTurn: not a reason to stop waiting
                }
            }
        } finally {
            lock.unlock();
        }
    }
}
