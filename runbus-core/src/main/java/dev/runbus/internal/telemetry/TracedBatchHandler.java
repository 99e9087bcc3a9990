package dev.runbus.internal.telemetry;

import dev.runbus.Batch;
import dev.runbus.BatchHandler;

/**
 * Gives each delivery of a batch call its own consumer span (see {@link TracedBatch}): the deliveries of one
 * read come from different publishes, each in its own trace.
 */
final class TracedBatchHandler implements BatchHandler {

    private final BatchHandler delegate;
    private final MessagingSpans spans;

    TracedBatchHandler(BatchHandler delegate, MessagingSpans spans) {
        this.delegate = delegate;
        this.spans = spans;
    }

    @Override
    public void handle(Batch batch) throws Exception {
        TracedBatch traced = new TracedBatch(batch, spans);
        Throwable failure = null;
        try {
            delegate.handle(traced);
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            traced.endRest(failure); // the call's end settles the rest the same way
        }
    }
}
