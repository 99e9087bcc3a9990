package dev.runbus.internal.telemetry;

import dev.runbus.BatchHandler;
import dev.runbus.Handler;
import dev.runbus.Publisher;
import dev.runbus.Tracing;
import java.util.Map;

/**
 * Where a bus lets tracing in: around its publishers and its handlers. Free of OpenTelemetry types, so that
 * the bus loads without it; {@link #NONE} (tracing off) hands everything back unchanged.
 */
public interface TraceHooks {

    TraceHooks NONE = new TraceHooks() {
        @Override
        public Publisher publisher(Publisher publisher) {
            return publisher;
        }

        @Override
        public Handler handler(Handler handler) {
            return handler;
        }

        @Override
        public BatchHandler batchHandler(BatchHandler handler) {
            return handler;
        }

        @Override
        public Map<String, String> currentContext() {
            return Map.of();
        }
    };

    /** The hooks of {@code tracing}: OpenTelemetry's classes are reached only when it is on. */
    static TraceHooks of(Tracing tracing) {
        return tracing.isOff() ? NONE : OpenTelemetryHooks.create(tracing.openTelemetry());
    }

    Publisher publisher(Publisher publisher);

    Handler handler(Handler handler);

    BatchHandler batchHandler(BatchHandler handler);

    /** The calling thread's trace context as message headers; empty when there is none or tracing is off. */
    Map<String, String> currentContext();
}
