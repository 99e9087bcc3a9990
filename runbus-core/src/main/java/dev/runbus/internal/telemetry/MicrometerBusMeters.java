package dev.runbus.internal.telemetry;

import dev.runbus.BusListener;
import dev.runbus.DeadLetter;
import dev.runbus.Delivery;
import dev.runbus.Outcome;
import dev.runbus.Publisher;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * The bus's meters on a Micrometer registry; docs/metrics.md lists them. The only class of the bus that imports
 * Micrometer ({@link TimedPublisher} reports to it). Meters are looked up once per tag combination
 * and kept, so that the hot path (a handler's end, an ack) costs a map lookup and an increment.
 */
final class MicrometerBusMeters implements BusMeters {

    private final MeterRegistry registry;
    private final Map<List<String>, Meter> meters = new ConcurrentHashMap<>();
    /** The gauges of the values {@link GaugeReader} found; its thread only. */
    private final Map<GaugeReader.Key, Gauge> gauges = new java.util.HashMap<>();
    private final Counting listener = new Counting();

    private MicrometerBusMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    static BusMeters create(Object registry, GaugeReader gauges) {
        MicrometerBusMeters m = new MicrometerBusMeters((MeterRegistry) registry);
        Gauge.builder("runbus.redis.up", gauges.redisUp(), Number::doubleValue)
                .description("Whether Redis answered the last read of the gauges (1) or not (0)")
                .register(m.registry);
        gauges.onChange(m::register, m::unregister);
        m.loopErrors();
        return m;
    }

    @Override
    public void subscribed(String topic, String group) {
        for (String outcome : List.of(SUCCESS, RETRY, DEAD_LETTER)) {
            handlerTimer(topic, group, outcome);
        }
        acks(topic, group);
        claims(topic, group);
        for (String event : List.of("expired", "lost", "parked_again")) {
            flowHolds(topic, group, event); // at zero from the start, as the other counters: with or without flowCap
        }
        admitWaitTimer(topic, group);
        listener.retries(topic, group);
        listener.deadLetters(topic, group);
        listener.trimmedWhilePending(topic, group);
        listener.claimsLost(topic, group);
        listener.consumersDeleted(topic, group);
        listener.nameInUse(topic, group);
        listener.retentionTrimmed(topic);
        listener.deadLettersTrimmed(topic);
        listener.depthRaised(topic);
    }

    /** A gauge's Micrometer name and description, by the reader's figure. */
    private record GaugeName(String name, String help) {
    }

    private static final Map<String, GaugeName> GAUGE_NAMES = Map.ofEntries(
            Map.entry(GaugeReader.LENGTH, new GaugeName("runbus.stream.length", "Entries in the topic's streams")),
            Map.entry(GaugeReader.DEAD_LETTERS, new GaugeName("runbus.dead.letter.depth",
                    "Entries in the topic's dead-letter streams (alert when above zero)")),
            Map.entry(GaugeReader.SCHEDULED, new GaugeName("runbus.scheduled.depth",
                    "Entries waiting in the topic's delay sets (delayed publishes and retries)")),
            Map.entry(GaugeReader.FLOW_PARKED, new GaugeName("runbus.flow.parked",
                    "Entries waiting outside the topic's streams for a free slot of their flow key")),
            Map.entry(GaugeReader.FLOW_HELD, new GaugeName("runbus.flow.held",
                    "Flow slots held: entries let into the topic's streams and not given back yet")),
            Map.entry(GaugeReader.FLOW_THROTTLED, new GaugeName("runbus.flow.throttled",
                    "Flow keys only their rate holds back: waiting for the time it lets their next entry in")),
            Map.entry(GaugeReader.PENDING, new GaugeName("runbus.group.pending",
                    "Entries delivered to the group and not yet acknowledged")),
            Map.entry(GaugeReader.LAG, new GaugeName("runbus.group.lag",
                    "Entries not yet delivered to the group; NaN when Redis cannot tell (runbus.group.lag.unknown)")),
            Map.entry(GaugeReader.LAG_UNKNOWN, new GaugeName("runbus.group.lag.unknown",
                    "1 when Redis cannot tell the group's lag (entries deleted past its position; Redis 6.2)")),
            Map.entry(GaugeReader.CONSUMERS_ALIVE, new GaugeName("runbus.group.consumers.alive",
                    "Consumers of the group with a recent heartbeat")),
            Map.entry(GaugeReader.OLDEST_PENDING_AGE, new GaugeName("runbus.group.oldest.pending.age",
                    "Seconds since the group's oldest pending entry was published (0 when none is pending)")),
            Map.entry(GaugeReader.UNOWNED, new GaugeName("runbus.partitions.unowned",
                    "Partitions of the ordered group that no consumer owns")));

    /** A gauge for a value the reader found for the first time. */
    private void register(GaugeReader.Key key, java.util.concurrent.atomic.AtomicLong value) {
        GaugeName g = GAUGE_NAMES.get(key.figure());
        if (g == null) {
            throw new IllegalStateException("unknown figure " + key.figure());
        }
        String name = g.name();
        String help = g.help();
        Tags tags = key.group() == null ? Tags.of("topic", key.topic()) : Tags.of("topic", key.topic(), "group", key.group());
        boolean millis = key.figure().equals(GaugeReader.OLDEST_PENDING_AGE);
        boolean lag = key.figure().equals(GaugeReader.LAG);
        gauges.put(key, Gauge.builder(name, value, v -> millis ? v.doubleValue() / 1000
                        : lag && v.get() < 0 ? Double.NaN : v.doubleValue())
                .description(help).tags(tags).baseUnit(millis ? "seconds" : null).register(registry));
    }

    /** The gauge of a value whose group is gone. */
    private void unregister(GaugeReader.Key key) {
        Gauge gauge = gauges.remove(key);
        if (gauge != null) {
            registry.remove(gauge);
        }
    }

    @Override
    public BusListener listener() {
        return listener;
    }

    @Override
    public void handled(String topic, String group, String outcome, long nanos) {
        handlerTimer(topic, group, outcome).record(nanos, TimeUnit.NANOSECONDS);
    }

    private Timer handlerTimer(String topic, String group, String outcome) {
        return timer("runbus.handler.duration", "Handler calls, by the outcome applied after them", "topic", topic,
                "group", group, "outcome", outcome);
    }

    @Override
    public Publisher timed(Publisher publisher) {
        return new TimedPublisher(publisher, this);
    }

    /** A publish of {@code messages} messages ended after {@code nanos}; {@code kind} is now, batch or delayed. */
    void published(String topic, String kind, boolean ok, int messages, long nanos) {
        timer("runbus.publish.duration", "Publish calls, by kind and outcome", "topic", topic, "kind", kind,
                "outcome", ok ? SUCCESS : FAILURE).record(nanos, TimeUnit.NANOSECONDS);
        if (ok && "delayed".equals(kind)) {
            counter("runbus.scheduled", "Messages published with a delay, into a delay set", "topic", topic)
                    .increment(messages);
        } else if (ok) {
            counter("runbus.published", "Messages appended to a stream", "topic", topic).increment(messages);
        }
    }

    @Override
    public void acked(String topic, String group, int entries) {
        acks(topic, group).increment(entries);
    }

    private Counter acks(String topic, String group) {
        return counter("runbus.acks", "Entries acknowledged", "topic", topic, "group", group);
    }

    @Override
    public void claimed(String topic, String group, int entries) {
        claims(topic, group).increment(entries);
    }

    @Override
    public void flowHolds(String topic, String group, String event, int entries) {
        flowHolds(topic, group, event).increment(entries);
    }

    @Override
    public void flowAdmitWait(String topic, String group, long millis) {
        admitWaitTimer(topic, group).record(millis, TimeUnit.MILLISECONDS);
    }

    private Timer admitWaitTimer(String topic, String group) {
        return timer("runbus.flow.admit.wait", "How long flow-controlled messages waited for a slot", "topic", topic,
                "group", group);
    }

    private Counter flowHolds(String topic, String group, String event) {
        return counter("runbus.flow.holds", "Flow slots expired or lost, and entries that found their key at its cap "
                + "and waited again", "topic", topic, "group", group, "event", event);
    }

    private Counter claims(String topic, String group) {
        return counter("runbus.claims", "Idle entries taken over by this process's reclaimer", "topic", topic,
                "group", group);
    }

    private Counter loopErrors() {
        // No tag for the loop: its name carries consumer names and stream keys; the log names it.
        return counter("runbus.loop.errors", "Failures of background loops (each one logged)");
    }

    @Override
    public void leaseChanged(String topic, String group, String change) {
        counter("runbus.lease.changes", "Partition leases acquired, lost or released", "topic", topic, "group", group,
                "change", change).increment();
    }

    @Override
    public Runnable ownedPartitions(String topic, String group, String consumer, IntSupplier owned) {
        Gauge gauge = Gauge.builder("runbus.partitions.owned", owned::getAsInt)
                .description("Partitions a consumer of this process owns").strongReference(true)
                .tags("topic", topic, "group", group, "consumer", consumer).register(registry);
        return () -> registry.remove(gauge);
    }

    private Counter counter(String name, String help, String... tags) {
        return (Counter) meters.computeIfAbsent(key(name, tags),
                k -> Counter.builder(name).description(help).tags(tags).register(registry));
    }

    private Timer timer(String name, String help, String... tags) {
        return (Timer) meters.computeIfAbsent(key(name, tags),
                k -> Timer.builder(name).description(help).tags(tags).register(registry));
    }

    private static List<String> key(String name, String... tags) {
        String[] k = new String[tags.length + 1];
        k[0] = name;
        System.arraycopy(tags, 0, k, 1, tags.length);
        return List.of(k);
    }

    /** The listener events, counted. */
    private final class Counting implements BusListener {
        @Override
        public void onDeadLetter(DeadLetter d) {
            deadLetters(d.topic(), d.group()).increment();
        }

        @Override
        public void onHandlerFailure(Delivery d, Throwable failure, Outcome outcome) {
            if (outcome == Outcome.RETRY) {
                retries(d.topic(), d.group()).increment();
            }
        }

        @Override
        public void onTrimmedWhilePending(String topic, String group, List<String> ids) {
            trimmedWhilePending(topic, group).increment(ids.size());
        }

        @Override
        public void onClaimLost(String topic, String group, String consumer, List<String> ids) {
            claimsLost(topic, group).increment(ids.size());
        }

        @Override
        public void onConsumerDeleted(String topic, String group, String consumer) {
            consumersDeleted(topic, group).increment();
        }

        @Override
        public void onConsumerNameInUse(String topic, String group, String consumer, Duration sinceHeartbeat) {
            nameInUse(topic, group).increment();
        }

        @Override
        public void onRetentionTrimmed(String topic, long entries) {
            retentionTrimmed(topic).increment(entries);
        }

        @Override
        public void onDeadLettersTrimmed(String topic, long entries) {
            deadLettersTrimmed(topic).increment(entries);
        }

        @Override
        public void onDeadLetterDepthRaised(String topic) {
            depthRaised(topic).increment();
        }

        @Override
        public void onLoopError(String loop, Throwable error) {
            loopErrors().increment();
        }

        Counter deadLetters(String topic, String group) {
            return counter("runbus.dead.letters", "Entries moved to a dead-letter stream by this process", "topic",
                    topic, "group", group);
        }

        Counter retries(String topic, String group) {
            return counter("runbus.retries", "Handler failures that leave the entry for another delivery", "topic",
                    topic, "group", group);
        }

        Counter trimmedWhilePending(String topic, String group) {
            return counter("runbus.trimmed.while.pending", "Entries trimmed while pending, acknowledged", "topic",
                    topic, "group", group);
        }

        Counter claimsLost(String topic, String group) {
            return counter("runbus.claims.lost", "Entries taken over by another consumer while still running here",
                    "topic", topic, "group", group);
        }

        Counter consumersDeleted(String topic, String group) {
            return counter("runbus.consumers.deleted", "Dead consumers deleted by the janitor", "topic", topic,
                    "group", group);
        }

        Counter nameInUse(String topic, String group) {
            return counter("runbus.consumer.name.in.use", "Subscriptions started under a consumer name another live"
                    + " process seemed to use", "topic", topic, "group", group);
        }

        Counter retentionTrimmed(String topic) {
            return counter("runbus.retention.trimmed", "Entries every group was done with, trimmed by retention",
                    "topic", topic);
        }

        Counter depthRaised(String topic) {
            return counter("runbus.dead.letter.depth.raised", "Rises of the topic's dead-letter depth from zero that"
                    + " this process made (decided in Redis: once across all processes)", "topic", topic);
        }

        Counter deadLettersTrimmed(String topic) {
            return counter("runbus.dead.letters.trimmed", "Dead letters trimmed by the opt-in dead-letter retention",
                    "topic", topic);
        }
    }
}
