package dev.runbus;

/** What the bus does with an entry after a delivery; decided in one place for every path. */
public enum Outcome {
    /** The handler succeeded: acknowledge the entry. */
    ACK,
    /**
     * The handler failed with deliveries left: the entry runs again when the subscription's
     * {@link SubscribeOptions#retryPolicy() retry policy} says: pending until idle for {@code minIdle} with
     * {@link RetryPolicy#onIdle()}, else acknowledged with a copy scheduled after the policy's delay (an ordered
     * subscription retries it in place after that delay).
     */
    RETRY,
    /** The entry reached {@code maxDeliveries}: move it to the dead-letter stream and acknowledge it there. */
    DEAD_LETTER
}
