package dev.runbus.server.web;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The overview's chart: every {@value #INTERVAL_SECONDS} s, how many messages this server's bus published and
 * acknowledged since the last sample, from its meters ({@code runbus.published}, {@code runbus.acks}), for the
 * last {@value #SAMPLES} samples (ten minutes). Read from memory only, like a scrape of {@code /metrics}: a
 * stalled Redis cannot hold the page. The figures are this process's, not those of workers elsewhere: their
 * rates are in Prometheus, which scrapes every process.
 */
final class RateHistory implements AutoCloseable {

    static final int INTERVAL_SECONDS = 5;
    static final int SAMPLES = 120;
    private static final Logger log = LoggerFactory.getLogger(RateHistory.class);

    private record Sample(long epochSecond, double published, double acked) {
    }

    private final MeterRegistry registry;
    private final Deque<Sample> samples = new ArrayDeque<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "runbus-dashboard-rates");
        t.setDaemon(true);
        return t;
    });
    private double lastPublished = -1;
    private double lastAcked = -1;

    RateHistory(MeterRegistry registry) {
        this.registry = registry;
    }

    RateHistory start() {
        timer.scheduleAtFixedRate(this::sampleSafely, 0, INTERVAL_SECONDS, TimeUnit.SECONDS);
        return this;
    }

    private void sampleSafely() {
        try {
            sample(System.currentTimeMillis() / 1000);
        } catch (RuntimeException e) {
            // one failed sample leaves a gap in the chart; the next one runs on time
            log.warn("dashboard: sampling the rates failed", e);
        }
    }

    /** Takes one sample of the counters' totals; the first one only sets the baseline. */
    synchronized void sample(long epochSecond) {
        double published = total("runbus.published");
        double acked = total("runbus.acks");
        if (lastPublished >= 0) {
            samples.addLast(new Sample(epochSecond, Math.max(0, published - lastPublished) / INTERVAL_SECONDS,
                    Math.max(0, acked - lastAcked) / INTERVAL_SECONDS));
            while (samples.size() > SAMPLES) {
                samples.removeFirst();
            }
        }
        lastPublished = published;
        lastAcked = acked;
    }

    private double total(String name) {
        double sum = 0;
        for (Counter c : registry.find(name).counters()) {
            sum += c.count();
        }
        return sum;
    }

    /**
     * The chart's series: {@code t} (epoch seconds), {@code published} and {@code acked} (per second); and the window
     * they belong to, the {@code window_seconds} up to {@code until} (now, in epoch seconds), which the chart's time
     * axis spans however few samples there are yet.
     */
    synchronized Map<String, Object> series() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("interval_seconds", INTERVAL_SECONDS);
        out.put("window_seconds", INTERVAL_SECONDS * SAMPLES);
        out.put("until", System.currentTimeMillis() / 1000);
        out.put("t", samples.stream().map(Sample::epochSecond).toList());
        out.put("published", samples.stream().map(Sample::published).toList());
        out.put("acked", samples.stream().map(Sample::acked).toList());
        return out;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
