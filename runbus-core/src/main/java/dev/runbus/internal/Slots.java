package dev.runbus.internal;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Bounds the entries a consumer holds at once (waiting for a handler or running): reads and claims take
 * slots first, so a slow handler slows reading instead of piling up entries that would sit idle in the PEL.
 */
final class Slots {

    private final Semaphore free;

    Slots(int capacity) {
        this.free = new Semaphore(capacity);
    }

    /** Waits up to the timeout for one slot, then takes as many more as are free, up to {@code max} in all. */
    int takeUpTo(int max, long timeoutMillis) throws InterruptedException {
        if (!free.tryAcquire(1, timeoutMillis, TimeUnit.MILLISECONDS)) {
            return 0;
        }
        return 1 + takeFree(max - 1);
    }

    /** Takes up to {@code max} free slots without waiting. */
    int takeFree(int max) {
        int taken = 0;
        while (taken < max && free.tryAcquire()) {
            taken++;
        }
        return taken;
    }

    void release(int n) {
        if (n > 0) {
            free.release(n);
        }
    }
}
