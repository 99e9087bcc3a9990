package dev.runbus.internal.redis;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Bounds the entries a consumer holds at once (waiting for a handler or running): reads and claims take
 * slots first, so a slow handler slows reading instead of piling up entries that would sit idle in the PEL.
 */
public final class Slots {

    private final Permits free;

    /** A semaphore that can be overdrawn. */
    private static final class Permits extends Semaphore {
        Permits(int n) {
            super(n);
        }

        public void overdraw(int n) {
            reducePermits(n);
        }
    }

    public Slots(int capacity) {
        this.free = new Permits(capacity);
    }

    /** Waits up to the timeout for one slot, then takes as many more as are free, up to {@code max} in all. */
    public int takeUpTo(int max, long timeoutMillis) throws InterruptedException {
        if (!free.tryAcquire(1, timeoutMillis, TimeUnit.MILLISECONDS)) {
            return 0;
        }
        return 1 + takeFree(max - 1);
    }

    /** Takes up to {@code max} free slots without waiting. */
    public int takeFree(int max) {
        int taken = 0;
        while (taken < max && free.tryAcquire()) {
            taken++;
        }
        return taken;
    }

    /**
     * Takes {@code n} slots whether free or not, for entries that came without room (a read answered after its
     * reader stopped waiting for it, {@link ClusterStreamReader}); reads wait until they are released.
     */
    public void overdraw(int n) {
        if (n > 0) {
            free.overdraw(n);
        }
    }

    public void release(int n) {
        if (n > 0) {
            free.release(n);
        }
    }
}
