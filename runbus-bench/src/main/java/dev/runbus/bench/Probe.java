package dev.runbus.bench;

import java.util.concurrent.atomic.LongAdder;

/**
 * What a contender's consumers report to the scenario: each message its handler saw, and, when latency is
 * measured, each message whose acknowledgement Redis confirmed, with the enqueue time from its payload.
 */
public final class Probe {

    private final LongAdder handled = new LongAdder();
    private final LatencyRecorder latency;

    public Probe(LatencyRecorder latency) {
        this.latency = latency;
    }

    public static Probe counting() {
        return new Probe(null);
    }

    /** Whether the consumers should read enqueue times and report acks; false for throughput runs. */
    public boolean timing() {
        return latency != null;
    }

    public void handled() {
        handled.increment();
    }

    public long handledCount() {
        return handled.sum();
    }

    /** The ack of a message enqueued at {@code enqueuedAt} (payload clock) was confirmed at {@code ackedAt}. */
    public void acked(long enqueuedAt, long ackedAt) {
        if (latency != null) {
            latency.record(enqueuedAt, ackedAt);
        }
    }
}
