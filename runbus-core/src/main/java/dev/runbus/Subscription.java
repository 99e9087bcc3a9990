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
     * Whether the subscription is reading: not closed, and its read loop's thread alive. The loop ends only with
     * the close (a failure of one read is reported and the loop goes on), so false before a close means a defect;
     * health checks report it.
     */
    boolean isReading();

    /**
     * Stops reading and claiming, waits up to {@link SubscribeOptions#shutdownTimeout()} for handlers,
     * flushes acknowledgements and stops the loops. Entries whose handler did not finish stay pending,
     * owned by this consumer: never acknowledged, never lost. Idempotent.
     */
    @Override
    void close();
}
