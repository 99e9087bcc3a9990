package dev.runbus.internal.telemetry;

import dev.runbus.BusListener;
import dev.runbus.Publisher;
import java.util.function.IntSupplier;

/**
 * What the bus measures, in the bus's own terms: no Micrometer type appears here, so that a bus without a meter
 * registry never loads a Micrometer class ({@code micrometer-core} is an optional dependency). {@link #NONE} measures
 * nothing; {@link MicrometerBusMeters} is the one implementation that measures, made only by {@link #of}.
 */
public interface BusMeters extends AutoCloseable {

    /** The handler succeeded and its entry was acknowledged. */
    String SUCCESS = "success";
    /** The handler failed and the entry stays for another delivery. */
    String RETRY = "retry";
    /** The handler failed on the last allowed delivery and the entry went to the dead-letter stream. */
    String DEAD_LETTER = "dead_letter";
    /** The handler failed on an entry acknowledged before work: nothing more happens to it. */
    String FAILURE = "failure";

    BusMeters NONE = new BusMeters() {
    };

    /** The tag of the outcome applied after a handler's call. */
    static String outcome(dev.runbus.Outcome applied) {
        return switch (applied) {
            case ACK -> SUCCESS;
            case RETRY -> RETRY;
            case DEAD_LETTER -> DEAD_LETTER;
        };
    }

    /**
     * The meters of a bus: {@link #NONE} without a registry. Micrometer's classes load only past the null check.
     *
     * @param registry a {@code io.micrometer.core.instrument.MeterRegistry}, or null
     */
    static BusMeters of(Object registry, GaugeReader gauges) {
        return registry == null ? NONE : MicrometerBusMeters.create(registry, gauges);
    }

    /** Counts the events the bus reports to its listeners (dead letters, retries, lost claims, trims, errors). */
    default BusListener listener() {
        return BusListener.NONE;
    }

    /** A subscription of the group starts: its meters are shown from now on, at zero before anything happens. */
    default void subscribed(String topic, String group) {
    }

    /** A handler call ended with {@code outcome} after {@code nanos}, and the outcome was applied. */
    default void handled(String topic, String group, String outcome, long nanos) {
    }

    /** The publisher, timed. */
    default Publisher timed(Publisher publisher) {
        return publisher;
    }

    /** Redis acknowledged {@code entries} entries of the group. */
    default void acked(String topic, String group, int entries) {
    }

    /** The reclaimer took over {@code entries} idle entries for this consumer. */
    default void claimed(String topic, String group, int entries) {
    }

    /**
     * Flow slots ({@code SubscribeOptions.flowCap}): {@code entries} holds {@code expired} (reaped: their consumer died
     * or stalled), {@code lost} (reaped while this process still ran their entries: it was paused past the lease), or
     * entries {@code parked_again} (read when their key had no free slot; they wait again, undelivered).
     */
    /** How long a flow-controlled message waited for its slot (ms, on the Redis clock), at its first delivery. */
    default void flowAdmitWait(String topic, String group, long millis) {
    }

    default void flowHolds(String topic, String group, String event, int entries) {
    }

    /** A partition's lease was acquired, lost or released ({@code change}) by a consumer of the group. */
    default void leaseChanged(String topic, String group, String change) {
    }

    /** Reports {@code owned} as the partitions a consumer owns until the returned handle is closed. */
    default Runnable ownedPartitions(String topic, String group, String consumer, IntSupplier owned) {
        return () -> {
        };
    }

    @Override
    default void close() {
    }
}
