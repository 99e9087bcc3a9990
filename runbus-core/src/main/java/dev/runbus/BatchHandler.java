package dev.runbus;

/**
 * Application code that processes the deliveries of one read together — up to
 * {@link SubscribeOptions#batchSize()} of them — for work that is cheaper done for many at once, such as
 * writing their effects in one database transaction.
 *
 * <p>Each delivery is settled exactly once, by the handler or when the call ends:
 * <ul>
 *   <li>{@link Batch#succeed} or {@link Batch#fail}, from any thread, while the call is running: the
 *       outcome is applied at once (acknowledged, or retried and at {@code maxDeliveries} dead-lettered, as
 *       for a {@link Handler} that returned or threw), so one slow delivery does not hold up the others;</li>
 *   <li>returning normally: every delivery not settled yet succeeds;</li>
 *   <li>throwing: every delivery not settled yet fails with that exception.</li>
 * </ul>
 * Deliveries are acknowledged one by one, so a batch can partly succeed; handling must be safe to repeat
 * for any of them (at-least-once delivery). {@link SubscribeOptions#concurrency()} is how many calls run at
 * once; a call's deliveries are kept alive until they are settled.
 */
@FunctionalInterface
public interface BatchHandler {
    void handle(Batch batch) throws Exception;

    /**
     * Whether this handler says when the work of each delivery starts ({@link Batch#starting}), rather than starting
     * all of them with the call. A handler that works through its deliveries one by one, or on a pool of threads,
     * says true: a process that dies in the middle of the batch then counts a delivery only for the deliveries whose
     * work had started. False by default: every delivery of a call counts from the call's start.
     */
    default boolean startsEachDelivery() {
        return false;
    }
}
