package dev.runbus.internal.consume;

import dev.runbus.Batch;
import dev.runbus.Delivery;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * One {@link dev.runbus.BatchHandler} call: which of its deliveries are settled, so that each is settled
 * exactly once — early by the handler, or by {@link #settleRest} when the call ends.
 */
final class BatchCall implements Batch {

    /** Applies the outcome of one delivery: {@code failure} is null on success. */
    @FunctionalInterface
    interface Settler {
        void settle(int index, Throwable failure);
    }

    private final List<Delivery> deliveries;
    private final Map<String, Integer> indexOf;
    private final AtomicIntegerArray settled;
    private final Settler settler;
    private volatile boolean ended;

    BatchCall(List<Delivery> deliveries, Settler settler) {
        this.deliveries = Collections.unmodifiableList(deliveries);
        this.indexOf = new HashMap<>(deliveries.size() * 2);
        for (int i = 0; i < deliveries.size(); i++) {
            indexOf.put(deliveries.get(i).streamId(), i);
        }
        this.settled = new AtomicIntegerArray(deliveries.size());
        this.settler = settler;
    }

    @Override
    public List<Delivery> deliveries() {
        return deliveries;
    }

    @Override
    public void succeed(Delivery delivery) {
        settleOne(delivery, null);
    }

    @Override
    public void fail(Delivery delivery, Throwable cause) {
        settleOne(delivery, Objects.requireNonNull(cause, "cause"));
    }

    private void settleOne(Delivery delivery, Throwable failure) {
        Objects.requireNonNull(delivery, "delivery");
        Integer i = indexOf.get(delivery.streamId());
        if (i == null || !deliveries.get(i).equals(delivery)) {
            throw new IllegalArgumentException("delivery " + delivery.streamId() + " is not one of this batch");
        }
        if (ended) {
            throw new IllegalStateException("the batch call has returned; delivery " + delivery.streamId()
                    + " was settled when it did");
        }
        if (!settled.compareAndSet(i, 0, 1)) {
            throw new IllegalStateException("delivery " + delivery.streamId() + " was settled already, or the call "
                    + "returned meanwhile");
        }
        settler.settle(i, failure);
    }

    /** When the call ended: settles what the handler did not, with {@code failure} (null when it returned). */
    void settleRest(Throwable failure) {
        ended = true;
        for (int i = 0; i < deliveries.size(); i++) {
            if (settled.compareAndSet(i, 0, 1)) {
                settler.settle(i, failure);
            }
        }
    }
}
