package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One trace from an HTTP submission to the run's handler in another process: a client span here sends
 * {@code traceparent} to {@code serve} (in this JVM, with this JVM's global OpenTelemetry SDK and an in-memory
 * exporter), whose publish of the trigger is the client span's child; a {@code runbus worker} in a child JVM, with
 * an SDK of its own that prints its spans, handles the run in a consumer span that is the publish's child, and the
 * handler's own span is a child of that.
 *
 * <p>serve runs a worker of its own: it is put in another group, whose handler ({@link HoldingHandler}, on input
 * "hold …") holds the run until the test is done, so the child's group is the one that completes it. Every group
 * gets every trigger, so the child handles the run whatever the timing.
 */
class TraceAcrossProcessesTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final InMemorySpanExporter exported = InMemorySpanExporter.create();
    private OpenTelemetrySdk otel;

    @BeforeEach
    void installSdk() {
        // Other tests' buses in this JVM read the global (as no-op) before: start from a clean one.
        GlobalOpenTelemetry.resetForTest();
        otel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exported))
                        .build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
        GlobalOpenTelemetry.set(otel);
        HoldingHandler.reset();
    }

    @AfterEach
    void removeSdk() {
        HoldingHandler.release();
        GlobalOpenTelemetry.resetForTest();
        otel.close();
    }

    /** A span line of the child: trace id, span id, parent span id, kind, message id, name. */
    private record ChildSpan(String traceId, String spanId, String parentSpanId, String kind, String messageId,
                             String name) {
        static ChildSpan parse(String line) {
            String[] f = line.split(" ", 7);
            return new ChildSpan(f[1], f[2], f[3], f[4], f[5], f[6]);
        }
    }

    private static String body(TestServe serve, String path) {
        try {
            return serve.get(path, null).body();
        } catch (Exception e) {
            throw new IllegalStateException("GET " + path, e);
        }
    }

    @Test
    void anHttpSubmissionAndTheRunsHandlerInAnotherProcessAreOneTrace() throws Exception {
        try (TestServe serve = TestServe.start(Map.of(Setting.HANDLER, HoldingHandler.class.getName(),
                Setting.GROUP, "serve-workers"))) {
            try (ChildJvm worker = ChildJvm.start(TracedWorker.class, "worker",
                    "--redis-url", RedisTarget.local().uri(), "--database-url", DemoEndToEndTest.DATABASE,
                    "--schema", serve.schema, "--key-prefix", serve.prefix, "--group", "child-workers",
                    "--consumer", "child-1", "--handler", TracedRunHandler.class.getName())) {
                worker.awaitLine("runbus worker child-1 ready", WAIT);

                Span client = otel.getTracer("test-client").spanBuilder("client submit").startSpan();
                HttpRequest.Builder request = serve.request("/v1/runs").header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(HttpApiTest.runBody("hold traced")));
                otel.getPropagators().getTextMapPropagator().inject(Context.root().with(client), request,
                        HttpRequest.Builder::header);
                HttpResponse<String> response = serve.send(request);
                client.end();
                assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
                String runId = TestServe.json(response).get("run_id").asText();
                String traceId = client.getSpanContext().getTraceId();

                SpanData publish = Wait.until("serve's publish of the trigger", WAIT,
                        () -> exported.getFinishedSpanItems().stream().filter(s -> s.getKind() == SpanKind.PRODUCER
                                && runId.equals(s.getAttributes().get(AttributeKey.stringKey("messaging.message.id"))))
                                .findFirst().orElse(null), s -> s != null);
                assertThat(publish.getTraceId()).as("serve publishes in the caller's trace").isEqualTo(traceId);
                assertThat(publish.getParentSpanId()).isEqualTo(client.getSpanContext().getSpanId());

                worker.awaitLine("SPAN " + traceId, WAIT);
                ChildSpan handler = ChildSpan.parse(worker.awaitLine("SPAN " + traceId, WAIT,
                        l -> l.endsWith(" handle " + runId)));
                ChildSpan consumer = ChildSpan.parse(worker.awaitLine("SPAN " + traceId, WAIT,
                        l -> l.contains(" CONSUMER " + runId + " ")));
                assertThat(consumer.name()).isEqualTo("process runs");
                assertThat(consumer.parentSpanId()).as("the worker's delivery is a child of serve's publish")
                        .isEqualTo(publish.getSpanId());
                assertThat(handler.traceId()).isEqualTo(traceId);
                assertThat(handler.parentSpanId()).as("the run handler's span is a child of the delivery's")
                        .isEqualTo(consumer.spanId());
                Wait.until("the run done by the child's worker", WAIT,
                        () -> body(serve, "/v1/runs/" + runId).contains("\"done\""));
            } finally {
                HoldingHandler.release();
            }
        }
    }
}
