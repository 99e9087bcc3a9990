package dev.runbus.testing;

import dev.runbus.BusListener;
import dev.runbus.DeadLetter;
import dev.runbus.Delivery;
import dev.runbus.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** Records handler calls and listener events so that tests can count them. */
public final class Recorder implements BusListener {

    public final List<Delivery> deliveries = new CopyOnWriteArrayList<>();
    public final Map<String, AtomicInteger> callsByMessageId = new ConcurrentHashMap<>();
    public final List<DeadLetter> deadLetters = new CopyOnWriteArrayList<>();
    public final List<String> trimmed = new CopyOnWriteArrayList<>();
    public final List<String> claimLost = new CopyOnWriteArrayList<>();
    public final List<String> failures = new CopyOnWriteArrayList<>();
    public final List<String> consumersDeleted = new CopyOnWriteArrayList<>();
    /** topic/group/consumer of each name reported in use by another process. */
    public final List<String> namesInUse = new CopyOnWriteArrayList<>();

    /** Call from a handler. */
    public void record(Delivery d) {
        deliveries.add(d);
        callsByMessageId.computeIfAbsent(d.message().id(), k -> new AtomicInteger()).incrementAndGet();
    }

    public int calls() {
        return deliveries.size();
    }

    public List<Long> deliveryCounts() {
        List<Long> out = new ArrayList<>();
        deliveries.forEach(d -> out.add(d.deliveryCount()));
        return out;
    }

    @Override
    public void onDeadLetter(DeadLetter deadLetter) {
        deadLetters.add(deadLetter);
    }

    @Override
    public void onHandlerFailure(Delivery delivery, Throwable failure, Outcome outcome) {
        failures.add(delivery.streamId() + ":" + delivery.deliveryCount() + ":" + outcome);
    }

    @Override
    public void onTrimmedWhilePending(String topic, String group, List<String> streamIds) {
        trimmed.addAll(streamIds);
    }

    @Override
    public void onClaimLost(String topic, String group, String consumer, List<String> streamIds) {
        claimLost.addAll(streamIds);
    }

    @Override
    public void onConsumerDeleted(String topic, String group, String consumer) {
        consumersDeleted.add(consumer);
    }

    @Override
    public void onConsumerNameInUse(String topic, String group, String consumer, Duration sinceHeartbeat) {
        namesInUse.add(topic + "/" + group + "/" + consumer);
    }
}
