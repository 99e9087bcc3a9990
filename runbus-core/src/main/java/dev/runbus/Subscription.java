package dev.runbus;

/**
 * A running consumer: one name in one group of one topic, with its read loop, reclaimer and keep-alive.
 * {@link #close()} stops it gracefully; see {@link Bus} for the order.
 */
public interface Subscription extends AutoCloseable {

    String topic();

    String group();

    String consumer();

    /** Entries read or claimed and not yet finished (waiting for a handler slot or running). */
    int inFlight();

    /**
     * Stops reading and claiming, waits up to {@link SubscribeOptions#shutdownTimeout()} for handlers,
     * flushes acknowledgements and stops the loops. Entries whose handler did not finish stay pending,
     * owned by this consumer: never acknowledged, never lost. Idempotent.
     */
    @Override
    void close();
}
