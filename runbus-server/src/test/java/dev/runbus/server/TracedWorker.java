package dev.runbus.server;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;

/**
 * {@code runbus worker} in a child JVM with an OpenTelemetry SDK of its own, installed as the global one as the
 * Java agent would: each span it ends is printed as one line, {@code SPAN <trace id> <span id> <parent span id>
 * <kind> <message id or -> <name>}, for the test in the parent JVM to read. Args: the worker's.
 */
public final class TracedWorker {

    private TracedWorker() {
    }

    public static void main(String[] args) {
        SpanExporter lines = new SpanExporter() {
            @Override
            public CompletableResultCode export(Collection<SpanData> spans) {
                for (SpanData s : spans) {
                    String messageId = s.getAttributes().get(
                            io.opentelemetry.api.common.AttributeKey.stringKey("messaging.message.id"));
                    System.out.println("SPAN " + s.getTraceId() + " " + s.getSpanId() + " " + s.getParentSpanId()
                            + " " + s.getKind() + " " + (messageId == null ? "-" : messageId) + " " + s.getName());
                }
                System.out.flush();
                return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode flush() {
                return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode shutdown() {
                return CompletableResultCode.ofSuccess();
            }
        };
        GlobalOpenTelemetry.set(OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(lines)).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build());
        RunbusCli.main(args);
    }
}
