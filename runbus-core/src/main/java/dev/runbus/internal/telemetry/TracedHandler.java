package dev.runbus.internal.telemetry;

import dev.runbus.Delivery;
import dev.runbus.Handler;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;

/** Runs a handler in its delivery's consumer span, current on the handler's thread for the spans it makes. */
final class TracedHandler implements Handler {

    private final Handler delegate;
    private final MessagingSpans spans;

    TracedHandler(Handler delegate, MessagingSpans spans) {
        this.delegate = delegate;
        this.spans = spans;
    }

    @Override
    public void handle(Delivery delivery) throws Exception {
        Context context = spans.startProcess(delivery);
        try (Scope ignored = context.makeCurrent()) {
            delegate.handle(delivery);
        } catch (Throwable failure) {
            MessagingSpans.fail(context, failure);
            throw failure;
        } finally {
            MessagingSpans.end(context);
        }
    }
}
