package dev.runbus.internal;

import dev.runbus.Inspector;
import dev.runbus.Scheduled;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * Reads the figures that need Redis (stream length, dead-letter and delay-set depth, each group's pending entries
 * and lag) for the topics this bus subscribes to, on its own loop, and keeps the last values. A scrape reads
 * these values and never waits for Redis: a stalled Redis holds back this loop only, and {@link #redisUp} says
 * so. Each topic is read apart, so a failing one does not keep the others from being read.
 */
final class GaugeReader implements Runnable {

    /** What a value is of: a figure's name, its topic, and its group (null for a topic's figures). */
    record Key(String figure, String topic, String group) {
    }

    static final String LENGTH = "length";
    static final String DEAD_LETTERS = "dead_letters";
    static final String SCHEDULED = "scheduled";
    static final String PENDING = "pending";
    static final String LAG = "lag";

    private final Inspector inspector;
    private final Scheduled scheduled;
    private final Supplier<Collection<String>> topics;
    private final SafeListener listener;
    private final Map<Key, AtomicLong> values = new ConcurrentHashMap<>();
    private final AtomicLong redisUp = new AtomicLong(1);
    private volatile BiConsumer<Key, AtomicLong> discovered = (key, value) -> {
    };
    private volatile java.util.function.Consumer<Key> vanished = key -> {
    };

    GaugeReader(Inspector inspector, Scheduled scheduled, Supplier<Collection<String>> topics, SafeListener listener) {
        this.inspector = inspector;
        this.scheduled = scheduled;
        this.topics = topics;
        this.listener = listener;
    }

    /**
     * {@code found} is called once for each value the first time it is read, {@code gone} when its group no longer
     * exists (deleted): on the reader's thread.
     */
    void onChange(BiConsumer<Key, AtomicLong> found, java.util.function.Consumer<Key> gone) {
        discovered = found;
        vanished = gone;
    }

    /** 1 while the last round read every topic, 0 after a failure. */
    AtomicLong redisUp() {
        return redisUp;
    }

    /** One round over the subscribed topics. */
    @Override
    public void run() {
        boolean up = true;
        for (String topic : topics.get()) {
            try {
                read(topic);
            } catch (RuntimeException e) {
                up = false;
                listener.onLoopError("reading the gauges of " + topic, e);
            }
        }
        redisUp.set(up ? 1 : 0);
    }

    private void read(String topic) {
        Inspector.StreamInfo info = inspector.stream(topic).orElse(null);
        set(new Key(LENGTH, topic, null), info == null ? 0 : info.length());
        set(new Key(DEAD_LETTERS, topic, null), info == null ? 0 : info.deadLetters());
        set(new Key(SCHEDULED, topic, null), scheduled.count(topic));
        java.util.Set<String> groups = new java.util.HashSet<>();
        for (Inspector.GroupInfo g : inspector.groups(topic)) {
            groups.add(g.name());
            set(new Key(PENDING, topic, g.name()), g.pending());
            set(new Key(LAG, topic, g.name()), Math.max(g.lag(), 0));
        }
        for (Key key : values.keySet()) {
            if (key.group() != null && key.topic().equals(topic) && !groups.contains(key.group())) {
                values.remove(key);
                vanished.accept(key);
            }
        }
    }

    private void set(Key key, long value) {
        AtomicLong known = values.get(key);
        if (known != null) {
            known.set(value);
            return;
        }
        AtomicLong fresh = new AtomicLong(value);
        values.put(key, fresh);
        discovered.accept(key, fresh);
    }
}
