package dev.runbus.internal.telemetry;

import dev.runbus.Batch;
import dev.runbus.Delivery;
import io.opentelemetry.context.Context;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A batch whose deliveries each have a consumer span, from the start of the call until the delivery is settled
 * (early, or when the call ends). {@link #withTraceContext} runs work on a delivery in its span, on whatever
 * thread the handler hands it to.
 */
final class TracedBatch implements Batch {

    private final Batch delegate;
    private final Map<Delivery, Context> contexts;
    /** Deliveries whose span has not ended; settling may come from any thread. */
    private final Set<Delivery> open = ConcurrentHashMap.newKeySet();

    TracedBatch(Batch delegate, MessagingSpans spans) {
        this.delegate = delegate;
        Map<Delivery, Context> started = new HashMap<>();
        for (Delivery d : delegate.deliveries()) {
            started.put(d, spans.startProcess(d));
            open.add(d);
        }
        this.contexts = started;
    }

    @Override
    public List<Delivery> deliveries() {
        return delegate.deliveries();
    }

    @Override
    public void succeed(Delivery delivery) {
        delegate.succeed(delivery);
        end(delivery, null);
    }

    @Override
    public void fail(Delivery delivery, Throwable cause) {
        delegate.fail(delivery, cause);
        end(delivery, cause);
    }

    @Override
    public Runnable withTraceContext(Delivery delivery, Runnable work) {
        Context context = contexts.get(delivery);
        return context == null ? work : context.wrap(work);
    }

    /** Ends the spans of the deliveries the call did not settle: failed by {@code failure}, or succeeded. */
    void endRest(Throwable failure) {
        for (Delivery d : contexts.keySet()) {
            end(d, failure);
        }
    }

    private void end(Delivery delivery, Throwable failure) {
        if (open.remove(delivery)) {
            Context context = contexts.get(delivery);
            if (failure != null) {
                MessagingSpans.fail(context, failure);
            }
            MessagingSpans.end(context);
        }
    }
}
