package dev.runbus.internal.consume;

import dev.runbus.Delivery;
import dev.runbus.internal.redis.Slots;

/**
 * A delivery on its way to a handler: its hold on the entry, the pool its slot returns to once settled, and whether
 * the entry was read as new (its pending list's delivery count is 1: {@link dev.runbus.internal.redis.Entry#fresh}).
 */
record HeldDelivery(Delivery delivery, InFlight.Hold hold, Slots slots, boolean fresh) {
}
