package dev.runbus.internal.consume;

import dev.runbus.Delivery;
import dev.runbus.internal.redis.Slots;

/** A delivery on its way to a handler: its hold on the entry, and the pool its slot returns to once settled. */
record HeldDelivery(Delivery delivery, InFlight.Hold hold, Slots slots) {
}
