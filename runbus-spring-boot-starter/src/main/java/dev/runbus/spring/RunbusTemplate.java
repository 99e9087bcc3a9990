package dev.runbus.spring;

import dev.runbus.Message;
import dev.runbus.Publisher;
import java.time.Duration;
import java.time.Instant;

/**
 * Publishes objects as JSON with the application's mapper. Thread-safe.
 *
 * <pre>{@code
 * template.publish("orders", "order.placed", order);                           // JSON payload
 * template.publish("orders", template.message("order.placed", order)
 *         .key(order.customerId()).header("source", "web").build());           // keyed, with a header
 * template.publish("emails", template.message("reminder", mail).build(), Duration.ofMinutes(10));   // delayed
 * }</pre>
 */
public class RunbusTemplate {

    private final Publisher publisher;
    private final PayloadJson json;

    public RunbusTemplate(Publisher publisher, PayloadJson json) {
        this.publisher = publisher;
        this.json = json;
    }

    /**
     * A message of {@code type} whose payload is {@code payload}'s JSON, to add a key or headers to.
     *
     * @throws IllegalArgumentException when {@code payload} cannot be written as JSON
     */
    public Message.Builder message(String type, Object payload) {
        return Message.builder(type, toJson(payload));
    }

    /** Publishes {@code payload} as JSON under {@code type}; returns the stream id. */
    public String publish(String topic, String type, Object payload) {
        return publisher.publish(topic, message(type, payload).build());
    }

    /** Publishes a message; a message with a key goes to its key's partition. Returns the stream id. */
    public String publish(String topic, Message message) {
        return publisher.publish(topic, message);
    }

    /** Appends {@code message} when {@code delay} has passed on the Redis server's clock; returns its id. */
    public String publish(String topic, Message message, Duration delay) {
        return publisher.publish(topic, message, delay);
    }

    /** Appends {@code message} at {@code dueAt} on the Redis server's clock; returns its id. */
    public String publishAt(String topic, Message message, Instant dueAt) {
        return publisher.publishAt(topic, message, dueAt);
    }

    /** The bus's publisher, for what this class does not wrap. */
    public Publisher publisher() {
        return publisher;
    }

    private byte[] toJson(Object payload) {
        try {
            return json.write(payload);
        } catch (Exception e) {
            throw new IllegalArgumentException("cannot write " + payload.getClass().getName() + " as JSON: "
                    + e.getMessage(), e);
        }
    }
}
