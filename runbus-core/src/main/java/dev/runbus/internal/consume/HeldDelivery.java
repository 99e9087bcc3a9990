package dev.runbus.internal.consume;

import dev.runbus.Delivery;
import dev.runbus.internal.redis.Slots;

/**
 * A delivery on its way to a handler: its hold on the entry, and the pool its slot returns to once settled.
 *
 * @param newEntry read as a new entry ({@code XREADGROUP >}): its first delivery, so no start can have been recorded
 *                 for it before
 */
record HeldDelivery(Delivery delivery, InFlight.Hold hold, Slots slots, boolean newEntry) {
}
