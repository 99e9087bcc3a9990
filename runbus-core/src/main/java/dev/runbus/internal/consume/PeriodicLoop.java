package dev.runbus.internal.consume;

import dev.runbus.internal.telemetry.SafeListener;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one step on its own daemon thread every interval until closed. A failing step is reported and the
 * loop keeps running: a Redis outage must not silently stop a reclaimer or a heartbeat.
 * {@link #close()} wakes the loop, waits for the step in progress to end, and returns.
 */
public final class PeriodicLoop implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PeriodicLoop.class);

    private final String name;
    private final long intervalNanos;
    private final Runnable step;
    private final SafeListener listener;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wake = lock.newCondition();
    private final Thread thread;
    private volatile boolean closed;
    /** Set by {@link #runSoon()}: the pause in progress ends. */
    private volatile boolean soon;
    /** Set by {@link #runAt}: the pause in progress ends at {@link #wakeAt} (System.nanoTime) at the latest. */
    private boolean wakeSet;
    private long wakeAt;

    public PeriodicLoop(String name, Duration interval, Runnable step, SafeListener listener) {
        this.name = name;
        this.intervalNanos = interval.toNanos();
        this.step = step;
        this.listener = listener;
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
    }

    public PeriodicLoop start() {
        thread.start();
        return this;
    }

    private void run() {
        while (!closed) {
            try {
                step.run();
            } catch (Throwable t) {
                if (closed) {
                    break;
                }
                log.warn("{} failed, will try again in {} ms", name, TimeUnit.NANOSECONDS.toMillis(intervalNanos), t);
                listener.onLoopError(name, t);
            }
            pause();
        }
    }

    private void pause() {
        lock.lock();
        try {
            long end = System.nanoTime() + intervalNanos;
            while (!closed && !soon) {
                long until = wakeSet && wakeAt - end < 0 ? wakeAt : end;
                long left = until - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                wake.awaitNanos(left);
            }
            soon = false;
            if (wakeSet && wakeAt - System.nanoTime() <= 0) {
                wakeSet = false; // reached; one later than this pause's end stays for the next pause
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        } finally {
            lock.unlock();
        }
    }

    /** Ends the pause in progress, so that the step runs again now rather than at the end of the interval. */
    public void runSoon() {
        lock.lock();
        try {
            soon = true;
            wake.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ends the pause in progress (or the next one) at {@code nanoTime} (a {@link System#nanoTime()} reading) at the
     * latest, so that the step runs then rather than at the end of the interval; the earliest of several calls wins.
     */
    public void runAt(long nanoTime) {
        lock.lock();
        try {
            if (!wakeSet || nanoTime - wakeAt < 0) {
                wakeSet = true;
                wakeAt = nanoTime;
                wake.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        closed = true;
        lock.lock();
        try {
            wake.signalAll();
        } finally {
            lock.unlock();
        }
        if (Thread.currentThread() != thread) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
