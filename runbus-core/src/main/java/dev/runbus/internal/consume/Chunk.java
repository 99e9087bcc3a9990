package dev.runbus.internal.consume;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Deliveries handed to the runners as one queue element, so that a runner wakes up once for all of them. The runner
 * that takes it runs them one after the other; a runner that has had nothing to do for a while takes the next one
 * instead, so that a delivery does not wait behind a slow neighbour while a runner is free. Every delivery is taken
 * exactly once, by whichever runner gets it first.
 */
final class Chunk {

    final List<HeldDelivery> deliveries;
    private final AtomicInteger next = new AtomicInteger();

    Chunk(List<HeldDelivery> deliveries) {
        this.deliveries = deliveries;
    }

    /**
     * The next delivery nobody has taken, or null when all are taken. The index stops at the end: idle runners keep
     * looking at a chunk whose last handler runs on, and a counter that went on would wrap around in time.
     */
    HeldDelivery take() {
        while (true) {
            int i = next.get();
            if (i >= deliveries.size()) {
                return null;
            }
            if (next.compareAndSet(i, i + 1)) {
                return deliveries.get(i);
            }
        }
    }

    /** Every delivery nobody has taken yet. */
    List<HeldDelivery> takeRest() {
        List<HeldDelivery> rest = new ArrayList<>();
        for (HeldDelivery h = take(); h != null; h = take()) {
            rest.add(h);
        }
        return rest;
    }
}
