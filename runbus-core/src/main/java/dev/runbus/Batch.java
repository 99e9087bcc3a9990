package dev.runbus;

import java.util.List;

/** The deliveries one {@link BatchHandler} call receives, and the way to settle each of them early. */
public interface Batch {

    /** The deliveries, in stream order within each read; never empty. */
    List<Delivery> deliveries();

    /**
     * The work of this delivery starts now, for a handler that starts its deliveries one by one
     * ({@link BatchHandler#startsEachDelivery()} true): its start is recorded (a delivery counts towards
     * {@code maxDeliveries} when its work starts, so that a process that dies in the middle of a batch costs the
     * deliveries it had not started nothing), and the call waits for its turn when the delivery must run alone among
     * the bus's handlers (one started {@code maxDeliveries} times without an outcome). It returns once Redis has
     * answered the start's record (or the command timeout passed; the work may start then, as a record lost with its
     * connection only lets the delivery come once more), so a count the work keeps of its own starts, written after it,
     * never runs ahead of the bus's. Call it on the thread that does the work, right before it. A delivery settled without being started counts as started when it fails and
     * not when it succeeds (its work was not needed). For a handler whose {@code startsEachDelivery()} is false,
     * every delivery was started with the call, and this does nothing.
     *
     * @throws IllegalArgumentException if the delivery is not one of this batch
     * @throws IllegalStateException    if it was started or settled already, the call has returned, or the
     *                                  subscription is closing
     */
    default void starting(Delivery delivery) {
    }

    /**
     * The work of this delivery is done: it is acknowledged now.
     *
     * @throws IllegalArgumentException if the delivery is not one of this batch
     * @throws IllegalStateException    if it was settled already, or the call has returned
     */
    void succeed(Delivery delivery);

    /**
     * The work of this delivery failed: it is delivered again as the subscription's
     * {@link SubscribeOptions#retryPolicy() retry policy} says (pending until idle for {@code minIdle} with
     * {@link RetryPolicy#onIdle()}, else acknowledged with a copy scheduled after the policy's delay), or at
     * {@code maxDeliveries} is moved to the dead-letter stream (with {@link AckMode#BEFORE_WORK} the entry was
     * acknowledged before the call, and the failure is only reported).
     *
     * @throws IllegalArgumentException if the delivery is not one of this batch
     * @throws IllegalStateException    if it was settled already, or the call has returned
     */
    void fail(Delivery delivery, Throwable cause);

    /**
     * {@code work} made to run in {@code delivery}'s trace context — its consumer span current, so that spans the
     * work makes are its children — for a handler that works on a delivery on another thread. With tracing off
     * ({@link BusConfig#tracing()}), {@code work} itself.
     */
    default Runnable withTraceContext(Delivery delivery, Runnable work) {
        return work;
    }
}
