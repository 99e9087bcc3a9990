package dev.runbus.internal.telemetry;

import dev.runbus.Delivery;
import dev.runbus.Message;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one place that knows OpenTelemetry's messaging conventions as runbus applies them: the producer span of a
 * publish, the consumer span of a delivery, their attributes, and the trace context in a message's headers
 * (docs/architecture.md, "Tracing"; the headers in docs/wire-format.md).
 *
 * <p>A consumer span is a child of the context its message carries, and links to it as well: one message per
 * span, so the parent puts a delivery in its producer's trace, and the link is what the conventions ask of every
 * process span. Every delivery of one message (a retry, a takeover, a delayed entry moved into its stream) carries
 * the same context and so joins the same trace.
 */
final class MessagingSpans {

    /** {@code messaging.system}: the protocol on top of Redis Streams is runbus's (groups, retries, dead letters). */
    static final String SYSTEM = "runbus";

    static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
    static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    static final AttributeKey<String> PARTITION = AttributeKey.stringKey("messaging.destination.partition.id");
    static final AttributeKey<String> OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
    static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
    static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    static final AttributeKey<String> CONSUMER_GROUP = AttributeKey.stringKey("messaging.consumer.group.name");
    static final AttributeKey<String> CLIENT_ID = AttributeKey.stringKey("messaging.client.id");
    static final AttributeKey<Long> BATCH_SIZE = AttributeKey.longKey("messaging.batch.message_count");
    static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    static final AttributeKey<String> STREAM_ID = AttributeKey.stringKey("runbus.stream_id");
    static final AttributeKey<String> SCHEDULED_ID = AttributeKey.stringKey("runbus.scheduled_id");
    static final AttributeKey<Long> DELIVERY_COUNT = AttributeKey.longKey("runbus.delivery_count");
    static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("runbus.attempt");

    private static final TextMapGetter<Map<String, String>> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> headers) {
            return headers.keySet();
        }

        @Override
        public String get(Map<String, String> headers, String name) {
            return headers == null ? null : headers.get(name);
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;

    MessagingSpans(OpenTelemetry openTelemetry) {
        this.tracer = openTelemetry.getTracer("dev.runbus");
        this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
    }

    /**
     * Starts the producer span of one message and returns the context it makes: its parent is the context the
     * message already carries (one captured where it was created, such as a run's submission), else the calling
     * thread's.
     */
    Context startSend(String topic, Message m, int batchSize) {
        Context parent = propagator.extract(Context.current(), m.headers(), HEADERS);
        SpanBuilder b = tracer.spanBuilder("send " + topic).setSpanKind(SpanKind.PRODUCER).setParent(parent)
                .setAttribute(MESSAGING_SYSTEM, SYSTEM).setAttribute(DESTINATION, topic)
                .setAttribute(OPERATION_TYPE, "send").setAttribute(OPERATION_NAME, "send")
                .setAttribute(MESSAGE_ID, m.id());
        if (batchSize > 1) {
            b.setAttribute(BATCH_SIZE, (long) batchSize);
        }
        return parent.with(b.startSpan());
    }

    /**
     * {@code m} with {@code context} in its headers, replacing the trace headers it had. Unchanged when the
     * context writes nothing, or when the headers would exceed {@link Message#MAX_HEADERS} (the message is
     * published without context rather than refused for it).
     */
    Message carrying(Message m, Context context) {
        Map<String, String> injected = headersOf(context);
        if (injected.isEmpty()) {
            return m;
        }
        Map<String, String> headers = new LinkedHashMap<>(m.headers());
        propagator.fields().forEach(headers::remove);
        headers.putAll(injected);
        if (headers.size() > Message.MAX_HEADERS) {
            return m;
        }
        Message.Builder b = Message.builder(m.type(), m.payload()).id(m.id()).publishedAt(m.publishedAt())
                .headers(headers);
        if (m.key() != null) {
            b.key(m.key());
        }
        return b.build();
    }

    /** The headers that carry {@code context}: {@code traceparent}, {@code tracestate} with the W3C propagator. */
    Map<String, String> headersOf(Context context) {
        Map<String, String> headers = new LinkedHashMap<>();
        propagator.inject(context, headers, (carrier, name, value) -> carrier.put(name, value));
        return headers;
    }

    /**
     * Starts the consumer span of a delivery, a child of (and linked to) the context its message carries, and
     * returns the context it makes, for the handler to run in.
     */
    Context startProcess(Delivery d) {
        Context parent = propagator.extract(Context.root(), d.message().headers(), HEADERS);
        SpanContext creation = Span.fromContext(parent).getSpanContext();
        SpanBuilder b = tracer.spanBuilder("process " + d.topic()).setSpanKind(SpanKind.CONSUMER).setParent(parent)
                .setAttribute(MESSAGING_SYSTEM, SYSTEM).setAttribute(DESTINATION, d.topic())
                .setAttribute(OPERATION_TYPE, "process").setAttribute(OPERATION_NAME, "process")
                .setAttribute(CONSUMER_GROUP, d.group()).setAttribute(CLIENT_ID, d.consumer())
                .setAttribute(MESSAGE_ID, d.message().id()).setAttribute(STREAM_ID, d.streamId())
                .setAttribute(DELIVERY_COUNT, d.deliveryCount()).setAttribute(ATTEMPT, d.attempt());
        int at = d.streamId().indexOf('@');
        if (at >= 0) {
            b.setAttribute(PARTITION, d.streamId().substring(at + 1));
        }
        if (creation.isValid()) {
            b.addLink(creation);
        }
        return parent.with(b.startSpan());
    }

    /** Marks the span of {@code context} failed by {@code failure}. */
    static void fail(Context context, Throwable failure) {
        Span span = Span.fromContext(context);
        span.recordException(failure);
        span.setAttribute(ERROR_TYPE, failure.getClass().getName());
        span.setStatus(StatusCode.ERROR, String.valueOf(failure.getMessage()));
    }

    static void end(Context context) {
        Span.fromContext(context).end();
    }
}
