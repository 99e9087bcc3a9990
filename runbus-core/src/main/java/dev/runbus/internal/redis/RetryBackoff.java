package dev.runbus.internal.redis;

/**
 * The pause before a failed read is tried again: 50 ms after the first failure, doubling to at most 1 s while
 * failures follow each other, back to 50 ms after a success. A slot that moved or a master promoted a moment
 * ago costs a short pause; a Redis that is down is not asked more than once a second per loop.
 */
public final class RetryBackoff {

    static final long FIRST_MILLIS = 50;
    public static final long MAX_MILLIS = 1000;

    private long next = FIRST_MILLIS;

    /** The pause to make now; the next one is twice as long, up to the maximum. */
    public long next() {
        long pause = next;
        next = Math.min(MAX_MILLIS, next * 2);
        return pause;
    }

    public void reset() {
        next = FIRST_MILLIS;
    }
}
