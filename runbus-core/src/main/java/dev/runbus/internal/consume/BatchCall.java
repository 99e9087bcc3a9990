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
 * One {@link dev.runbus.BatchHandler} call: which of its deliveries are started and settled, so that each is settled
 * exactly once — early by the handler, or by {@link #settleRest} when the call ends — and, for a handler that starts
 * each delivery itself ({@link dev.runbus.BatchHandler#startsEachDelivery}), started at most once, before it is
 * settled.
 */
final class BatchCall implements Batch {

    /** A delivery's state: not started, started beside other handlers, started alone, settled, starting. */
    static final int NEW = 0;
    static final int BESIDE = 1;
    static final int ALONE = 2;
    private static final int SETTLED = 3;
    private static final int STARTING = 4;

    /** Applies the outcome of one delivery: {@code failure} is null on success; {@code state} as it was started. */
    @FunctionalInterface
    interface Settler {
        void settle(int index, Throwable failure, int state);
    }

    /** Starts deliveries of a call whose handler starts each one itself. */
    interface Starter {
        /**
         * Takes the delivery's turn among the bus's handlers and records its start. Returns {@link #ALONE} or
         * {@link #BESIDE}; throws when it cannot start (the subscription is closing).
         */
        int start(int index);

        /** Gives back the turn {@link #start} took, for a delivery settled while it was starting. */
        void release(int index, int as);
    }

    private final List<Delivery> deliveries;
    private final Map<String, Integer> indexOf;
    private final AtomicIntegerArray state;
    private final Settler settler;
    /** Null when the whole call was started at once. */
    private final Starter starter;
    private volatile boolean ended;

    BatchCall(List<Delivery> deliveries, Settler settler, Starter starter) {
        this.deliveries = Collections.unmodifiableList(deliveries);
        this.indexOf = new HashMap<>(deliveries.size() * 2);
        for (int i = 0; i < deliveries.size(); i++) {
            indexOf.put(deliveries.get(i).streamId(), i);
        }
        this.state = new AtomicIntegerArray(deliveries.size());
        this.settler = settler;
        this.starter = starter;
    }

    @Override
    public List<Delivery> deliveries() {
        return deliveries;
    }

    @Override
    public void starting(Delivery delivery) {
        int i = indexOf(delivery);
        if (starter == null) {
            return;
        }
        if (ended || !state.compareAndSet(i, NEW, STARTING)) {
            throw new IllegalStateException("delivery " + delivery.streamId() + " was started or settled already, or"
                    + " the call has returned");
        }
        int as;
        try {
            as = starter.start(i);
        } catch (RuntimeException notStarted) {
            state.compareAndSet(i, STARTING, NEW);
            throw notStarted;
        }
        if (!state.compareAndSet(i, STARTING, as)) {
            // settled from another thread while it was starting (as not started): its turn is not needed any more
            starter.release(i, as);
        }
    }

    @Override
    public void succeed(Delivery delivery) {
        settleOne(delivery, null);
    }

    @Override
    public void fail(Delivery delivery, Throwable cause) {
        settleOne(delivery, Objects.requireNonNull(cause, "cause"));
    }

    private int indexOf(Delivery delivery) {
        Objects.requireNonNull(delivery, "delivery");
        Integer i = indexOf.get(delivery.streamId());
        if (i == null || !deliveries.get(i).equals(delivery)) {
            throw new IllegalArgumentException("delivery " + delivery.streamId() + " is not one of this batch");
        }
        return i;
    }

    private void settleOne(Delivery delivery, Throwable failure) {
        int i = indexOf(delivery);
        if (ended) {
            throw new IllegalStateException("the batch call has returned; delivery " + delivery.streamId()
                    + " was settled when it did");
        }
        int was = take(i);
        if (was == SETTLED) {
            throw new IllegalStateException("delivery " + delivery.streamId() + " was settled already, or the call "
                    + "returned meanwhile");
        }
        settler.settle(i, failure, was);
    }

    /** When the call ended: settles what the handler did not, with {@code failure} (null when it returned). */
    void settleRest(Throwable failure) {
        ended = true;
        for (int i = 0; i < deliveries.size(); i++) {
            int was = take(i);
            if (was != SETTLED) {
                settler.settle(i, failure, was);
            }
        }
    }

    /**
     * Marks delivery {@code i} settled; returns its state before ({@link #NEW} for one that was still starting),
     * {@link #SETTLED} if it was already.
     */
    private int take(int i) {
        while (true) {
            int s = state.get(i);
            if (s == SETTLED) {
                return s;
            }
            if (state.compareAndSet(i, s, SETTLED)) {
                return s == STARTING ? NEW : s;
            }
        }
    }
}
