package dev.runbus.internal.delay;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Ids of scheduled entries: unique without coordination, and ordered by when this process made them, so that
 * entries of one publisher due in the same millisecond are moved in the order they were scheduled (Redis orders
 * equal scores by member). {@code <epoch ms, 11 hex><sequence, 6 hex>-<random, 8 hex>}.
 */
public final class ScheduledIds {

    private static final AtomicLong SEQUENCE = new AtomicLong();

    private ScheduledIds() {
    }

    public static String next() {
        return String.format("%011x%06x-%08x", System.currentTimeMillis(), SEQUENCE.incrementAndGet() & 0xffffff,
                ThreadLocalRandom.current().nextInt());
    }
}
