package dev.runbus;

import java.util.List;

/** The deliveries one {@link BatchHandler} call receives, and the way to settle each of them early. */
public interface Batch {

    /** The deliveries, in stream order within each read; never empty. */
    List<Delivery> deliveries();

    /**
     * The work of this delivery is done: it is acknowledged now.
     *
     * @throws IllegalArgumentException if the delivery is not one of this batch
     * @throws IllegalStateException    if it was settled already, or the call has returned
     */
    void succeed(Delivery delivery);

    /**
     * The work of this delivery failed: it stays pending and is delivered again, or at
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
