package dev.runbus.internal.telemetry;

import dev.runbus.Message;
import dev.runbus.Publisher;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;

/** A publisher whose calls are timed and counted by {@link MicrometerBusMeters}, failures included. */
final class TimedPublisher implements Publisher {

    private final Publisher publisher;
    private final MicrometerBusMeters meters;

    TimedPublisher(Publisher publisher, MicrometerBusMeters meters) {
        this.publisher = publisher;
        this.meters = meters;
    }

    @Override
    public String publish(String topic, Message message) {
        return timed(topic, "now", 1, () -> publisher.publish(topic, message));
    }

    @Override
    public List<String> publishAll(String topic, List<Message> messages) {
        return timed(topic, "batch", messages == null ? 0 : messages.size(), () -> publisher.publishAll(topic, messages));
    }

    @Override
    public String publish(String topic, Message message, Duration delay) {
        return timed(topic, "delayed", 1, () -> publisher.publish(topic, message, delay));
    }

    @Override
    public String publishAt(String topic, Message message, Instant dueAt) {
        return timed(topic, "delayed", 1, () -> publisher.publishAt(topic, message, dueAt));
    }

    private <T> T timed(String topic, String kind, int messages, Supplier<T> call) {
        long started = System.nanoTime();
        boolean ok = false;
        try {
            T result = call.get();
            ok = true;
            return result;
        } finally {
            meters.published(String.valueOf(topic), kind, ok, messages, System.nanoTime() - started);
        }
    }
}
