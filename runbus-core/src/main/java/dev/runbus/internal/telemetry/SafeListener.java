package dev.runbus.internal.telemetry;

import dev.runbus.BusListener;
import dev.runbus.DeadLetter;
import dev.runbus.Delivery;
import dev.runbus.Outcome;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Calls the user's listener so that its exceptions never break a loop; also logs each event once. */
public final class SafeListener implements BusListener {

    private static final Logger log = LoggerFactory.getLogger("dev.runbus");

    private final List<BusListener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final java.util.concurrent.atomic.AtomicLong lastDeadLetterLog =
            new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - 2_000_000_000L);
    private final java.util.concurrent.atomic.AtomicLong quietDeadLetters = new java.util.concurrent.atomic.AtomicLong();
    private final BusListener delegate = new Fanout();
    /** The bus's meters: every loop holds this listener already, so they reach the meters through it. */
    private volatile BusMeters meters = BusMeters.NONE;

    public SafeListener(BusListener configured) {
        listeners.add(configured);
    }

    /** Measures with {@code m} from now on: its counting listener hears every event, after the configured one. */
    public void measureWith(BusMeters m) {
        meters = m;
        listeners.add(m.listener());
    }

    public BusMeters meters() {
        return meters;
    }

    public AutoCloseable add(BusListener listener) {
        listeners.add(java.util.Objects.requireNonNull(listener, "listener"));
        return () -> listeners.remove(listener);
    }

    @Override
    public void onDeadLetter(DeadLetter d) {
        // At most one WARN a second: a burst of poison must not turn into a burst of log I/O on handler threads.
        long now = System.nanoTime();
        long last = lastDeadLetterLog.get();
        if (now - last >= 1_000_000_000L && lastDeadLetterLog.compareAndSet(last, now)) {
            long more = quietDeadLetters.getAndSet(0);
            log.warn("dead-lettered {} of topic {} (group {}, {} deliveries): {}{}", d.originalStreamId(), d.topic(),
                    d.group(), d.deliveries(), d.reason(), more == 0 ? "" : " (and " + more + " more since the last "
                            + "such line)");
        } else {
            quietDeadLetters.incrementAndGet();
            log.debug("dead-lettered {} of topic {}: {}", d.originalStreamId(), d.topic(), d.reason());
        }
        call(() -> delegate.onDeadLetter(d));
    }

    @Override
    public void onHandlerFailure(Delivery d, Throwable failure, Outcome outcome) {
        log.debug("handler failed on {} of topic {} (delivery {}), outcome {}", d.streamId(), d.topic(),
                d.deliveryCount(), outcome, failure);
        call(() -> delegate.onHandlerFailure(d, failure, outcome));
    }

    @Override
    public void onTrimmedWhilePending(String topic, String group, List<String> ids) {
        log.warn("{} entries of topic {} were trimmed while pending in group {}; acked: {}", ids.size(), topic,
                group, ids);
        call(() -> delegate.onTrimmedWhilePending(topic, group, ids));
    }

    @Override
    public void onClaimLost(String topic, String group, String consumer, List<String> ids) {
        log.warn("consumer {} of {}/{} lost its claim on {} while still working on them", consumer, topic, group,
                ids);
        call(() -> delegate.onClaimLost(topic, group, consumer, ids));
    }

    @Override
    public void onConsumerDeleted(String topic, String group, String consumer) {
        log.info("deleted dead consumer {} of {}/{}", consumer, topic, group);
        call(() -> delegate.onConsumerDeleted(topic, group, consumer));
    }

    @Override
    public void onConsumerNameInUse(String topic, String group, String consumer, Duration sinceHeartbeat) {
        log.warn("consumer name {} of {}/{} had a heartbeat {} ms before this subscription started: another live "
                + "process seems to use it, and the two would deliver each other's in-flight entries again; give "
                + "every process its own consumer name", consumer, topic, group, sinceHeartbeat.toMillis());
        call(() -> delegate.onConsumerNameInUse(topic, group, consumer, sinceHeartbeat));
    }

    @Override
    public void onRetentionTrimmed(String topic, long entries) {
        log.debug("retention trimmed {} entries of topic {}", entries, topic);
        call(() -> delegate.onRetentionTrimmed(topic, entries));
    }

    @Override
    public void onDeadLettersTrimmed(String topic, long entries) {
        log.info("dead-letter retention trimmed {} dead letters of topic {}", entries, topic);
        call(() -> delegate.onDeadLettersTrimmed(topic, entries));
    }

    @Override
    public void onDeadLetterDepthRaised(String topic) {
        log.error("topic {} has dead letters again: its dead-letter depth went from zero to more (runbus dlq list)",
                topic);
        call(() -> delegate.onDeadLetterDepthRaised(topic));
    }

    @Override
    public void onLoopError(String loop, Throwable error) {
        call(() -> delegate.onLoopError(loop, error));
    }

    /** Calls every listener; one that throws does not keep the others from hearing the event. */
    private final class Fanout implements BusListener {
        @Override
        public void onDeadLetter(DeadLetter d) {
            listeners.forEach(l -> call(() -> l.onDeadLetter(d)));
        }

        @Override
        public void onHandlerFailure(Delivery d, Throwable failure, Outcome outcome) {
            listeners.forEach(l -> call(() -> l.onHandlerFailure(d, failure, outcome)));
        }

        @Override
        public void onTrimmedWhilePending(String topic, String group, List<String> ids) {
            listeners.forEach(l -> call(() -> l.onTrimmedWhilePending(topic, group, ids)));
        }

        @Override
        public void onClaimLost(String topic, String group, String consumer, List<String> ids) {
            listeners.forEach(l -> call(() -> l.onClaimLost(topic, group, consumer, ids)));
        }

        @Override
        public void onConsumerDeleted(String topic, String group, String consumer) {
            listeners.forEach(l -> call(() -> l.onConsumerDeleted(topic, group, consumer)));
        }

        @Override
        public void onConsumerNameInUse(String topic, String group, String consumer, Duration sinceHeartbeat) {
            listeners.forEach(l -> call(() -> l.onConsumerNameInUse(topic, group, consumer, sinceHeartbeat)));
        }

        @Override
        public void onRetentionTrimmed(String topic, long entries) {
            listeners.forEach(l -> call(() -> l.onRetentionTrimmed(topic, entries)));
        }

        @Override
        public void onDeadLettersTrimmed(String topic, long entries) {
            listeners.forEach(l -> call(() -> l.onDeadLettersTrimmed(topic, entries)));
        }

        @Override
        public void onDeadLetterDepthRaised(String topic) {
            listeners.forEach(l -> call(() -> l.onDeadLetterDepthRaised(topic)));
        }

        @Override
        public void onLoopError(String loop, Throwable error) {
            listeners.forEach(l -> call(() -> l.onLoopError(loop, error)));
        }
    }

    private static void call(Runnable r) {
        try {
            r.run();
        } catch (Throwable e) {
            // Errors too: a listener's AssertionError must not kill a handler runner or a loop.
            log.warn("a BusListener threw; ignored", e);
        }
    }
}
