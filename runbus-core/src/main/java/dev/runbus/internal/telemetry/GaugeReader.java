package dev.runbus.internal.telemetry;

import dev.runbus.Inspector;
import dev.runbus.Scheduled;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * Reads the figures that need Redis (stream length, dead-letter and delay-set depth, flow-controlled entries waiting
 * and slots held, each group's pending entries and lag) for the topics this bus subscribes to, on its own loop, and keeps the last values. A scrape reads
 * these values and never waits for Redis: a stalled Redis holds back this loop only, and {@link #redisUp} says
 * so. Each topic is read apart, so a failing one does not keep the others from being read.
 */
public final class GaugeReader implements Runnable {

    /** What a value is of: a figure's name, its topic, and its group (null for a topic's figures). */
    record Key(String figure, String topic, String group) {
    }

    static final String LENGTH = "length";
    static final String DEAD_LETTERS = "dead_letters";
    static final String SCHEDULED = "scheduled";
    static final String PENDING = "pending";
    /** A group's lag; -1 when Redis cannot tell it, which the gauge shows as NaN, never as 0. */
    static final String LAG = "lag";
    /** 1 while Redis cannot tell a group's lag, else 0: so that an alert can name the unknown case. */
    static final String LAG_UNKNOWN = "lag_unknown";
    static final String CONSUMERS_ALIVE = "consumers_alive";
    static final String OLDEST_PENDING_AGE = "oldest_pending_age";
    static final String UNOWNED = "unowned";
    static final String FLOW_PARKED = "flow_parked";
    static final String FLOW_HELD = "flow_held";
    static final String FLOW_THROTTLED = "flow_throttled";

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

    public GaugeReader(Inspector inspector, Scheduled scheduled, Supplier<Collection<String>> topics, SafeListener listener) {
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
        Inspector.FlowInfo flow = inspector.flow(topic);
        set(new Key(FLOW_PARKED, topic, null), flow.parked());
        set(new Key(FLOW_HELD, topic, null), flow.held());
        set(new Key(FLOW_THROTTLED, topic, null), flow.throttled());
        java.util.Set<String> groups = new java.util.HashSet<>();
        for (Inspector.GroupInfo g : inspector.groups(topic)) {
            groups.add(g.name());
            set(new Key(PENDING, topic, g.name()), g.pending());
            // XINFO GROUPS answers no lag after entries past the group's position were deleted, and Redis 6.2 has
            // none: reported as 0, such a group would look caught up while entries wait.
            set(new Key(LAG, topic, g.name()), g.lag() < 0 ? -1 : g.lag());
            set(new Key(LAG_UNKNOWN, topic, g.name()), g.lag() < 0 ? 1 : 0);
            set(new Key(CONSUMERS_ALIVE, topic, g.name()),
                    inspector.consumers(topic, g.name()).stream().filter(Inspector.ConsumerInfo::alive).count());
            set(new Key(OLDEST_PENDING_AGE, topic, g.name()), oldestPendingAgeMillis(topic, g));
            readUnowned(topic, g.name());
        }
        for (Key key : values.keySet()) {
            if (key.group() != null && key.topic().equals(topic) && !groups.contains(key.group())) {
                values.remove(key);
                vanished.accept(key);
            }
        }
    }

    /**
     * How long ago the group's oldest pending entry was published, in milliseconds (from its stream id, which is
     * the time Redis appended it); 0 when nothing is pending. An entry that stays pending this long is stuck.
     */
    private long oldestPendingAgeMillis(String topic, Inspector.GroupInfo g) {
        if (g.pending() == 0) {
            return 0;
        }
        List<Inspector.PendingEntry> oldest = inspector.pending(topic, g.name(), 1);
        if (oldest.isEmpty()) {
            return 0;
        }
        String id = oldest.get(0).streamId();
        int at = id.indexOf('@');
        String plain = at < 0 ? id : id.substring(0, at);
        long appended = Long.parseLong(plain.substring(0, plain.indexOf('-')));
        return Math.max(0, System.currentTimeMillis() - appended);
    }

    /**
     * The partitions of an ordered group that have no owner. A group is taken for ordered once one of its
     * partitions has had a lease (a fencing token): an unordered group never has owners, and shows no such gauge.
     */
    private void readUnowned(String topic, String group) {
        List<Inspector.PartitionInfo> partitions = inspector.partitions(topic, group);
        if (partitions.stream().noneMatch(p -> p.owner() != null || p.fencingToken() > 0)) {
            return;
        }
        set(new Key(UNOWNED, topic, group), partitions.stream().filter(p -> p.owner() == null).count());
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
