package dev.runbus.internal.ordered;

import dev.runbus.internal.redis.Keys;

/**
 * What a partition's lease holds in an ordered group:
 * {@code "<fencing token> <consumer> <acquired at, epoch ms> <acquisition id>"}, as lease_acquire.lua writes it (the
 * acquisition id lets a call sent again find its own lease; nothing here reads it). Consumer names hold no whitespace
 * ({@link Keys#checkName}).
 *
 * @param token            the fencing token; -1 when missing or not a number
 * @param consumer         the owner; null when missing
 * @param acquiredAtMillis when the lease was taken, on the Redis clock; -1 when missing or not a number
 */
public record LeaseValue(long token, String consumer, long acquiredAtMillis) {

    /** Reads a lease's value; null for none. */
    public static LeaseValue parse(String value) {
        if (value == null) {
            return null;
        }
        String[] parts = value.trim().split(" ");
        return new LeaseValue(number(parts, 0), parts.length > 1 ? parts[1] : null, number(parts, 2));
    }

    private static long number(String[] parts, int i) {
        try {
            return parts.length > i ? Long.parseLong(parts[i]) : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
