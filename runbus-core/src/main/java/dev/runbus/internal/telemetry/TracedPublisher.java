package dev.runbus.internal.telemetry;

import dev.runbus.Message;
import dev.runbus.Publisher;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * A publisher whose every message carries its producer span's context: one span per message, from before the
 * message is written until Redis answered (for a batch, until the whole batch was answered). A delayed message
 * carries it too, in the delay set, into its stream entry and its retries.
 */
final class TracedPublisher implements Publisher {

    private final Publisher delegate;
    private final MessagingSpans spans;

    TracedPublisher(Publisher delegate, MessagingSpans spans) {
        this.delegate = delegate;
        this.spans = spans;
    }

    @Override
    public String publish(String topic, Message message) {
        return traced(topic, message, MessagingSpans.STREAM_ID, m -> delegate.publish(topic, m));
    }

    @Override
    public String publish(String topic, Message message, Duration delay) {
        return traced(topic, message, MessagingSpans.SCHEDULED_ID, m -> delegate.publish(topic, m, delay));
    }

    @Override
    public String publishAt(String topic, Message message, Instant dueAt) {
        return traced(topic, message, MessagingSpans.SCHEDULED_ID, m -> delegate.publishAt(topic, m, dueAt));
    }

    @Override
    public List<String> publishAll(String topic, List<Message> messages) {
        Objects.requireNonNull(messages, "messages");
        List<Context> sends = new ArrayList<>(messages.size());
        List<Message> carrying = new ArrayList<>(messages.size());
        try {
            for (Message m : messages) {
                Context send = spans.startSend(topic, Objects.requireNonNull(m, "a message in the batch is null"),
                        messages.size());
                sends.add(send);
                carrying.add(spans.carrying(m, send));
            }
            List<String> ids = delegate.publishAll(topic, carrying);
            for (int i = 0; i < ids.size(); i++) {
                Span.fromContext(sends.get(i)).setAttribute(MessagingSpans.STREAM_ID, ids.get(i));
            }
            return ids;
        } catch (RuntimeException e) {
            sends.forEach(send -> MessagingSpans.fail(send, e));
            throw e;
        } finally {
            sends.forEach(MessagingSpans::end);
        }
    }

    private String traced(String topic, Message message, AttributeKey<String> idKey, Function<Message, String> send) {
        Context context = spans.startSend(topic, Objects.requireNonNull(message, "message"), 1);
        try {
            String id = send.apply(spans.carrying(message, context));
            Span.fromContext(context).setAttribute(idKey, id);
            return id;
        } catch (RuntimeException e) {
            MessagingSpans.fail(context, e);
            throw e;
        } finally {
            MessagingSpans.end(context);
        }
    }
}
