package dev.runbus.bench;

import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Enqueue-to-ack latencies of the messages enqueued from {@code measureFrom} on (earlier ones are warm-up).
 * Microsecond resolution, three significant digits; safe to record from many threads.
 */
public final class LatencyRecorder {

    private static final long HIGHEST_MICROS = 10L * 60 * 1_000_000;

    private final Histogram histogram = new ConcurrentHistogram(HIGHEST_MICROS, 3);
    private volatile long measureFrom = Long.MAX_VALUE;

    public void measureFrom(long benchNanos) {
        measureFrom = benchNanos;
    }

    /** Times on the {@link Payloads#now()} clock. */
    public void record(long enqueuedAt, long ackedAt) {
        if (enqueuedAt >= measureFrom) {
            long micros = Math.max(0, (ackedAt - enqueuedAt) / 1_000);
            histogram.recordValue(Math.min(micros, HIGHEST_MICROS));
        }
    }

    public long count() {
        return histogram.getTotalCount();
    }

    /** The latency at {@code percentile} (0..100) in milliseconds. */
    public double millisAt(double percentile) {
        return histogram.getTotalCount() == 0 ? Double.NaN : histogram.getValueAtPercentile(percentile) / 1_000.0;
    }
}
