package dev.runbus.internal.telemetry;

import dev.runbus.BatchHandler;
import dev.runbus.Handler;
import dev.runbus.Publisher;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.context.Context;
import java.util.Map;

/** {@link TraceHooks} through an {@link OpenTelemetry} instance; loaded only when tracing is on. */
final class OpenTelemetryHooks implements TraceHooks {

    private final MessagingSpans spans;

    private OpenTelemetryHooks(MessagingSpans spans) {
        this.spans = spans;
    }

    static TraceHooks create(OpenTelemetry openTelemetry) {
        return new OpenTelemetryHooks(new MessagingSpans(openTelemetry));
    }

    @Override
    public Publisher publisher(Publisher publisher) {
        return new TracedPublisher(publisher, spans);
    }

    @Override
    public Handler handler(Handler handler) {
        return new TracedHandler(handler, spans);
    }

    @Override
    public BatchHandler batchHandler(BatchHandler handler) {
        return new TracedBatchHandler(handler, spans);
    }

    @Override
    public Map<String, String> currentContext() {
        return spans.headersOf(Context.current());
    }
}
