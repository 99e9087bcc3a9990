package dev.runbus.server.http;

import io.javalin.http.Context;
import io.javalin.http.Handler;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;

/**
 * Runs a route in the trace context its request carries (W3C {@code traceparent} and {@code tracestate},
 * read by {@link GlobalOpenTelemetry}'s propagators), so that the run it submits publishes its trigger in the
 * caller's trace. A context already current is kept: the OpenTelemetry Java agent's server span of the request
 * is itself a child of the caller's.
 */
final class IncomingTraceContext {

    private static final TextMapGetter<Context> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Context request) {
            return request.headerMap().keySet();
        }

        @Override
        public String get(Context request, String name) {
            return request == null ? null : request.header(name);
        }
    };

    private IncomingTraceContext() {
    }

    static Handler around(Handler route) {
        return request -> {
            if (Span.current().getSpanContext().isValid()) {
                route.handle(request);
                return;
            }
            io.opentelemetry.context.Context caller = GlobalOpenTelemetry.getPropagators().getTextMapPropagator()
                    .extract(io.opentelemetry.context.Context.current(), request, HEADERS);
            try (Scope ignored = caller.makeCurrent()) {
                route.handle(request);
            }
        };
    }
}
