package dev.runbus;

/** What the bus does with an entry after a delivery; decided in one place for every path. */
public enum Outcome {
    /** The handler succeeded: acknowledge the entry. */
    ACK,
    /** The handler failed with deliveries left: leave the entry pending; it is delivered again after {@code minIdle}. */
    RETRY,
    /** The entry reached {@code maxDeliveries}: move it to the dead-letter stream and acknowledge it there. */
    DEAD_LETTER
}
