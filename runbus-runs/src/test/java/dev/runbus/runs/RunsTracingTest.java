package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Tracing;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.testkit.Wait;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A run's execution joins the trace of its submission: the trigger, published from the group-commit thread,
 * carries the submitter's context, and the run handler runs in the trigger's consumer span. A trigger the sweeper
 * republishes has no submitter to take a context from: it starts a trace of its own.
 */
class RunsTracingTest extends RunsTestSupport {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final InMemorySpanExporter exported = InMemorySpanExporter.create();
    private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exported)).build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
    /** The span current in the run handler, by run id. */
    private final Map<UUID, SpanContext> inHandler = new ConcurrentHashMap<>();

    @AfterEach
    void closeSdk() {
        otel.close();
    }

    private Runs tracedRuns() {
        Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).tracing(Tracing.openTelemetry(otel))
                .build());
        closeables.add(bus);
        Runs runs = runs(bus, "w1", workerOptions().build());
        runs.startWorker(run -> {
            inHandler.put(run.runId(), Span.current().getSpanContext());
            return List.of(Reply.assistant("ok"));
        });
        return runs;
    }

    private SpanData span(SpanKind kind, UUID runId) {
        return Wait.until(kind + " span of run " + runId, WAIT, () -> exported.getFinishedSpanItems().stream()
                .filter(s -> s.getKind() == kind && runId.toString().equals(s.getAttributes().get(
                        io.opentelemetry.api.common.AttributeKey.stringKey("messaging.message.id"))))
                .findFirst().orElse(null), s -> s != null);
    }

    @Test
    void theRunHandlerRunsInTheTraceOfTheSubmission() {
        Runs runs = tracedRuns();
        Span caller = otel.getTracer("test").spanBuilder("submit").startSpan();
        UUID id;
        try (Scope ignored = caller.makeCurrent()) {
            id = runs.submit(NewRun.of("s", "u", "traced")).runId();
        } finally {
            caller.end();
        }
        Wait.until("the run done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);

        SpanData producer = span(SpanKind.PRODUCER, id);
        SpanData consumer = span(SpanKind.CONSUMER, id);
        assertThat(producer.getTraceId()).isEqualTo(caller.getSpanContext().getTraceId());
        assertThat(producer.getParentSpanId()).isEqualTo(caller.getSpanContext().getSpanId());
        assertThat(consumer.getParentSpanId()).isEqualTo(producer.getSpanId());
        assertThat(inHandler.get(id).getSpanId()).as("the run handler runs in the trigger's consumer span")
                .isEqualTo(consumer.getSpanId());
        assertThat(inHandler.get(id).getTraceId()).isEqualTo(caller.getSpanContext().getTraceId());
    }

    @Test
    void aTriggerTheSweeperRepublishesStartsATraceOfItsOwn() {
        Runs runs = tracedRuns();
        UUID id = lostRun("lost", Duration.ofMinutes(1));
        runs.sweepOnce();
        Wait.until("the run done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);

        SpanData producer = span(SpanKind.PRODUCER, id);
        SpanData consumer = span(SpanKind.CONSUMER, id);
        assertThat(producer.getParentSpanContext().isValid()).as("the sweeper's publish has no parent").isFalse();
        assertThat(consumer.getTraceId()).isEqualTo(producer.getTraceId());
        assertThat(consumer.getParentSpanId()).isEqualTo(producer.getSpanId());
        assertThat(inHandler.get(id).getSpanId()).isEqualTo(consumer.getSpanId());
    }
}
