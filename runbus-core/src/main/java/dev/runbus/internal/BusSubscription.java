package dev.runbus.internal;

import dev.runbus.Subscription;

/** A subscription as the bus closes it: all stop taking work first, so that their handlers drain side by side. */
interface BusSubscription extends Subscription {

    /** Step 1 of the shutdown order: take no new work. */
    void stopTakingWork();

    /** The rest of the shutdown order. */
    void finishClose();
}
