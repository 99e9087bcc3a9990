package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Trace context through the bus, with OpenTelemetry's SDK and its in-memory exporter: a publish and the handling
 * of what it published make one trace (a producer span, then a consumer span as its child), whatever the way
 * from one to the other — a delay, a retry, a batch handler's own threads.
 */
class TracingTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final String prefix = "test-tracing-" + UUID.randomUUID();
    private final InMemorySpanExporter exported = InMemorySpanExporter.create();
    private final SdkTracerProvider tracerProvider = SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(exported)).build();
    private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder().setTracerProvider(tracerProvider)
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
    private final List<Bus> buses = new ArrayList<>();

    @AfterEach
    void cleanUp() {
        buses.forEach(Bus::close);
        RedisTarget.local().deleteKeys(prefix);
        otel.close();
    }

    private Bus bus(Tracing tracing) {
        Bus bus = Bus.connect(BusConfig.builder(RedisTarget.local().uri()).keyPrefix(prefix).tracing(tracing).build());
        buses.add(bus);
        return bus;
    }

    private static SubscribeOptions.Builder options() {
        return SubscribeOptions.builder().blockTime(Duration.ofMillis(200));
    }

    private static Message message(String text) {
        return Message.of("t", text.getBytes(StandardCharsets.UTF_8));
    }

    private SpanData awaitSpan(String what, SpanKind kind, int nth) {
        return Wait.until(what, TIMEOUT, () -> spans(kind), l -> l.size() > nth).get(nth);
    }

    private List<SpanData> spans(SpanKind kind) {
        return exported.getFinishedSpanItems().stream().filter(s -> s.getKind() == kind).toList();
    }

    @Test
    void aPublishAndItsDeliveryMakeOneTraceOfAProducerSpanAndAConsumerSpanUnderIt() {
        Bus bus = bus(Tracing.openTelemetry(otel));
        List<SpanContext> currentInHandler = new CopyOnWriteArrayList<>();
        List<Map<String, String>> headers = new CopyOnWriteArrayList<>();
        bus.subscribe("orders", "billing", "billing-1", d -> {
            currentInHandler.add(Span.current().getSpanContext());
            headers.add(d.message().headers());
        }, options().build());
        Span caller = otel.getTracer("test").spanBuilder("caller").startSpan();
        Message sent = Message.builder("order.created", new byte[] {1}).header("tenant", "acme").build();
        String streamId;
        try (Scope ignored = caller.makeCurrent()) {
            streamId = bus.publisher().publish("orders", sent);
        } finally {
            caller.end();
        }

        SpanData consumer = awaitSpan("the consumer span", SpanKind.CONSUMER, 0);
        SpanData producer = spans(SpanKind.PRODUCER).get(0);
        assertThat(producer.getName()).isEqualTo("send orders");
        assertThat(producer.getTraceId()).isEqualTo(caller.getSpanContext().getTraceId());
        assertThat(producer.getParentSpanId()).as("the publish is a child of the caller's span")
                .isEqualTo(caller.getSpanContext().getSpanId());
        assertThat(producer.getAttributes().asMap()).containsEntry(AttributeKey.stringKey("messaging.system"), "runbus")
                .containsEntry(AttributeKey.stringKey("messaging.destination.name"), "orders")
                .containsEntry(AttributeKey.stringKey("messaging.operation.type"), "send")
                .containsEntry(AttributeKey.stringKey("messaging.message.id"), sent.id())
                .containsEntry(AttributeKey.stringKey("runbus.stream_id"), streamId);

        assertThat(consumer.getName()).isEqualTo("process orders");
        assertThat(consumer.getTraceId()).isEqualTo(producer.getTraceId());
        assertThat(consumer.getParentSpanId()).as("the delivery is a child of the publish")
                .isEqualTo(producer.getSpanId());
        assertThat(consumer.getLinks()).extracting(l -> l.getSpanContext().getSpanId())
                .containsExactly(producer.getSpanId());
        assertThat(consumer.getAttributes().asMap())
                .containsEntry(AttributeKey.stringKey("messaging.system"), "runbus")
                .containsEntry(AttributeKey.stringKey("messaging.destination.name"), "orders")
                .containsEntry(AttributeKey.stringKey("messaging.operation.type"), "process")
                .containsEntry(AttributeKey.stringKey("messaging.consumer.group.name"), "billing")
                .containsEntry(AttributeKey.stringKey("messaging.client.id"), "billing-1")
                .containsEntry(AttributeKey.stringKey("messaging.message.id"), sent.id())
                .containsEntry(AttributeKey.stringKey("runbus.stream_id"), streamId)
                .containsEntry(AttributeKey.longKey("runbus.delivery_count"), 1L)
                .containsEntry(AttributeKey.longKey("runbus.attempt"), 1L);
        assertThat(currentInHandler).extracting(SpanContext::getSpanId).as("the handler runs in the consumer span")
                .containsExactly(consumer.getSpanId());
        assertThat(headers.get(0)).containsEntry("tenant", "acme");
        assertThat(headers.get(0).get("traceparent")).as("W3C: version, trace id, parent id (the publish), flags")
                .startsWith("00-" + producer.getTraceId() + "-" + producer.getSpanId() + "-");
    }

    @Test
    void aDelayedMessageKeepsItsTrace() {
        Bus bus = bus(Tracing.openTelemetry(otel));
        bus.subscribe("later", "g", "c", d -> { }, options().build());
        bus.publisher().publish("later", message("soon"), Duration.ofMillis(300));

        SpanData consumer = awaitSpan("the consumer span", SpanKind.CONSUMER, 0);
        SpanData producer = spans(SpanKind.PRODUCER).get(0);
        assertThat(producer.getAttributes().get(AttributeKey.stringKey("runbus.scheduled_id"))).isNotEmpty();
        assertThat(consumer.getTraceId()).isEqualTo(producer.getTraceId());
        assertThat(consumer.getParentSpanId()).isEqualTo(producer.getSpanId());
    }

    @Test
    void aRetryKeepsItsTraceAndTheFailedAttemptsSpanSaysItFailed() {
        Bus bus = bus(Tracing.openTelemetry(otel));
        AtomicInteger calls = new AtomicInteger();
        bus.subscribe("pay", "g", "c", d -> {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("first attempt fails");
            }
        }, options().retryPolicy(RetryPolicy.fixed(Duration.ofMillis(100))).minIdle(Duration.ofMinutes(1)).build());
        bus.publisher().publish("pay", message("x"));

        SpanData second = awaitSpan("the retry's consumer span", SpanKind.CONSUMER, 1);
        SpanData first = spans(SpanKind.CONSUMER).get(0);
        SpanData producer = spans(SpanKind.PRODUCER).get(0);
        assertThat(first.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(first.getAttributes().get(AttributeKey.stringKey("error.type")))
                .isEqualTo(IllegalStateException.class.getName());
        assertThat(second.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
        assertThat(List.of(first, second)).allSatisfy(s -> {
            assertThat(s.getTraceId()).isEqualTo(producer.getTraceId());
            assertThat(s.getParentSpanId()).isEqualTo(producer.getSpanId());
        });
        assertThat(second.getAttributes().get(AttributeKey.longKey("runbus.attempt"))).isEqualTo(2L);
        assertThat(second.getAttributes().get(AttributeKey.stringKey("runbus.stream_id")))
                .as("the retry is a new entry").isNotEqualTo(first.getAttributes().get(
                        AttributeKey.stringKey("runbus.stream_id")));
    }

    @Test
    void aBatchHandlerGivesEachDeliveryItsOwnSpanAndRunsWorkInItOnOtherThreads() throws Exception {
        Bus bus = bus(Tracing.openTelemetry(otel));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        Map<String, SpanContext> currentInWork = new java.util.concurrent.ConcurrentHashMap<>();
        try {
            bus.subscribeBatch("jobs", "g", "c", batch -> {
                List<CompletableFuture<Void>> done = new ArrayList<>();
                for (Delivery d : batch.deliveries()) {
                    done.add(CompletableFuture.runAsync(batch.withTraceContext(d, () -> {
                        currentInWork.put(d.message().id(), Span.current().getSpanContext());
                        batch.succeed(d);
                    }), pool));
                }
                CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).join();
            }, options().batchSize(10).build());
            List<String> traces = new ArrayList<>();
            List<Message> messages = new ArrayList<>();
            for (int i = 0; i < 3; i++) { // each message from a trace of its own
                Span caller = otel.getTracer("test").spanBuilder("caller-" + i).startSpan();
                try (Scope ignored = caller.makeCurrent()) {
                    messages.add(Message.builder("t", new byte[0]).headers(bus.currentTraceContext()).build());
                } finally {
                    caller.end();
                }
                traces.add(caller.getSpanContext().getTraceId());
            }
            bus.publisher().publishAll("jobs", messages);

            Wait.until("three consumer spans", TIMEOUT, () -> spans(SpanKind.CONSUMER).size() == 3);
            for (int i = 0; i < 3; i++) {
                String id = messages.get(i).id();
                SpanData consumer = spans(SpanKind.CONSUMER).stream()
                        .filter(s -> id.equals(s.getAttributes().get(AttributeKey.stringKey("messaging.message.id"))))
                        .findFirst().orElseThrow();
                SpanData producer = spans(SpanKind.PRODUCER).stream()
                        .filter(s -> id.equals(s.getAttributes().get(AttributeKey.stringKey("messaging.message.id"))))
                        .findFirst().orElseThrow();
                assertThat(producer.getTraceId()).as("a message built in a trace is published in it")
                        .isEqualTo(traces.get(i));
                assertThat(consumer.getTraceId()).isEqualTo(traces.get(i));
                assertThat(consumer.getParentSpanId()).isEqualTo(producer.getSpanId());
                assertThat(currentInWork.get(id).getSpanId()).isEqualTo(consumer.getSpanId());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anOrderedSubscriptionOnAPartitionedTopicRunsItsHandlerInTheConsumerSpanToo() {
        Bus bus = Bus.connect(BusConfig.builder(RedisTarget.local().uri()).keyPrefix(prefix)
                .partitions("keyed", 2).tracing(Tracing.openTelemetry(otel)).build());
        buses.add(bus);
        List<SpanContext> currentInHandler = new CopyOnWriteArrayList<>();
        bus.subscribe("keyed", "g", "c", d -> currentInHandler.add(Span.current().getSpanContext()),
                options().ordered(true).build());
        String streamId = bus.publisher().publish("keyed", "user-1", message("x"));

        SpanData consumer = awaitSpan("the consumer span", SpanKind.CONSUMER, 0);
        SpanData producer = spans(SpanKind.PRODUCER).get(0);
        assertThat(consumer.getParentSpanId()).isEqualTo(producer.getSpanId());
        assertThat(consumer.getAttributes().get(AttributeKey.stringKey("messaging.destination.partition.id")))
                .isEqualTo(streamId.substring(streamId.indexOf('@') + 1));
        assertThat(currentInHandler).extracting(SpanContext::getSpanId).containsExactly(consumer.getSpanId());
    }

    @Test
    void withTracingOffNothingIsWrittenIntoTheHeaders() {
        Bus bus = bus(Tracing.OFF);
        List<Map<String, String>> headers = new CopyOnWriteArrayList<>();
        bus.subscribe("plain", "g", "c", d -> headers.add(d.message().headers()), options().build());
        Span caller = otel.getTracer("test").spanBuilder("caller").startSpan();
        try (Scope ignored = caller.makeCurrent()) {
            assertThat(bus.currentTraceContext()).isEmpty();
            bus.publisher().publish("plain", message("x"));
        } finally {
            caller.end();
        }
        Wait.until("the delivery", TIMEOUT, () -> !headers.isEmpty());
        assertThat(headers.get(0)).isEmpty();
        assertThat(exported.getFinishedSpanItems()).extracting(SpanData::getName).containsExactly("caller");
    }
}
