package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.Message;
import dev.runbus.Publisher;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import dev.runbus.bench.DelayScenario.Lateness;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * The lateness windows of the delay scenario: entries scheduled with {@code publishAt} and carrying their due time
 * in a header, two consumer buses (one subscription each) whose handlers record start − due, both on the Redis
 * server's clock ({@link ServerClock}). An entry counts as early when it was handled before its due time by more
 * than the clock estimate's uncertainty.
 */
final class DelayLateness {

    static final long MIN_DELAY_MILLIS = 500;
    static final long MAX_DELAY_MILLIS = 3_000;
    /**
     * Lone entries: each scheduled when the delay set is empty (the one before it delivered), so no mover knows of
     * an entry due before it, with a delay shorter than the default poll interval, so that a mover's poll may find
     * it only after it is due: the case the poll interval bounds. (An entry due later than the next poll is seen by
     * that poll, and the mover then looks again when it is due.)
     */
    static final long LONE_MIN_DELAY_MILLIS = 0;
    static final long LONE_MAX_DELAY_MILLIS = 100;
    static final int BUSES = 2;
    /** Handlers per consumer bus: {@value} × {@link #BUSES} = C = 4. */
    static final int CONCURRENCY = 2;
    /** Threads calling {@code publishAt} (each call waits for its reply), each sending its share at its time. */
    static final int SCHEDULERS = 4;
    private static final String HEADER_DUE = "due";

    private DelayLateness() {
    }

    /** {@code rate} entries per second for {@code millis} ms, due 0.5–3 s later. */
    static Schedule steady(int rate, long millis) {
        return (publisher, topic, clock, handled) -> schedulePaced(publisher, topic, clock, rate, millis);
    }

    /** {@code n} lone entries, one after the other. */
    static Schedule lone(int n) {
        return (publisher, topic, clock, handled) -> scheduleLone(publisher, topic, clock, handled, n);
    }

    /** How a window schedules its entries; returns how many it scheduled. */
    @FunctionalInterface
    interface Schedule {
        long run(Publisher publisher, String topic, ServerClock clock, LongAdder handled) throws Exception;
    }

    /**
     * One window: the entries scheduled by {@code schedule}, then waiting until every entry was handled.
     * {@code hinted}: the entries are scheduled through the first consumer bus instead of a bus of their own.
     */
    static Lateness measure(Env env, long pollMillis, boolean hinted, Schedule schedule) {
        String slug = "delay-late";
        String topic = "late-" + env.nextId();
        List<Bus> consumers = new ArrayList<>();
        Bus publisherBus = null;
        ServerClock clock = null;
        try {
            for (int i = 0; i < BUSES; i++) {
                consumers.add(DelayScenario.bus(env, slug, pollMillis));
            }
            publisherBus = hinted ? null : DelayScenario.bus(env, slug, pollMillis);
            Publisher publisher = hinted ? consumers.get(0).publisher() : publisherBus.publisher();
            clock = ServerClock.start(env.admin);
            ServerClock c = clock;
            Histogram micros = new ConcurrentHistogram(60_000_000L, 3);
            Histogram earlyMicros = new ConcurrentHistogram(60_000_000L, 3);
            LongAdder handled = new LongAdder();
            List<Subscription> subs = new ArrayList<>();
            for (int i = 0; i < BUSES; i++) {
                subs.add(consumers.get(i).subscribe(topic, "workers", "w" + i, d -> {
                    long late = c.nowMicros() - Long.parseLong(d.message().headers().get(HEADER_DUE)) * 1_000;
                    if (late < 0) {
                        earlyMicros.recordValue(Math.min(-late, earlyMicros.getHighestTrackableValue()));
                    }
                    micros.recordValue(Math.min(Math.max(0, late), micros.getHighestTrackableValue()));
                    handled.increment();
                }, SubscribeOptions.builder().concurrency(CONCURRENCY).blockTime(Duration.ofMillis(100)).build()));
            }
            Env.sleep(300);
            long t0 = System.nanoTime();
            long scheduled = schedule.run(publisher, topic, clock, handled);
            double achieved = scheduled / ((System.nanoTime() - t0) / 1e9);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MAX_DELAY_MILLIS + 30_000);
            while (handled.sum() < scheduled && System.nanoTime() < deadline) {
                LockSupport.parkNanos(1_000_000);
            }
            subs.forEach(Subscription::close);
            if (handled.sum() < scheduled) {
                Progress.say("  lateness: timed out, %,d of %,d handled", handled.sum(), scheduled);
            }
            // Early: handled before due by more than the clock estimate may be off.
            double uncertainty = clock.uncertaintyMillis();
            long tolerance = (long) Math.ceil(uncertainty * 1_000);
            long early = earlyMicros.getTotalCount() == 0 ? 0
                    : earlyMicros.getCountBetweenValues(tolerance + 1, earlyMicros.getHighestTrackableValue());
            double earliest = earlyMicros.getTotalCount() > 0 ? -earlyMicros.getMaxValue() / 1_000.0
                    : micros.getMinValue() / 1_000.0;
            return new Lateness(micros.getValueAtPercentile(50) / 1_000.0, micros.getValueAtPercentile(99) / 1_000.0,
                    micros.getMaxValue() / 1_000.0, earliest, scheduled, handled.sum(), early, achieved,
                    uncertainty);
        } catch (Exception e) {
            Progress.say("  lateness failed: %s", e);
            return Lateness.FAILED;
        } finally {
            if (clock != null) {
                clock.close();
            }
            consumers.forEach(Bus::close);
            if (publisherBus != null) {
                publisherBus.close();
            }
            env.admin.deleteMatching(env.prefix(slug) + ":{" + topic + "}*");
        }
    }

    /**
     * {@code n} entries one after the other, each scheduled once the one before it was handled (so the delay set
     * is empty), due {@value #LONE_MIN_DELAY_MILLIS}–{@value #LONE_MAX_DELAY_MILLIS} ms later.
     */
    private static long scheduleLone(Publisher publisher, String topic, ServerClock clock, LongAdder handled, int n) {
        SplittableRandom random = new SplittableRandom(topic.hashCode());
        byte[] payload = Payloads.make(0, false);
        for (int i = 0; i < n; i++) {
            long due = clock.nowMicros() / 1_000 + random.nextLong(LONE_MIN_DELAY_MILLIS, LONE_MAX_DELAY_MILLIS + 1);
            publisher.publishAt(topic, Message.builder("bench", payload).header(HEADER_DUE, Long.toString(due)).build(),
                    Instant.ofEpochMilli(due));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (handled.sum() <= i && System.nanoTime() < deadline) {
                LockSupport.parkNanos(200_000);
            }
        }
        return n;
    }

    /**
     * {@code rate} entries per second for {@code millis} ms from {@link #SCHEDULERS} threads, each sending its
     * share at its time (late when the thread wakes late, never more than behind); each due at the server's
     * now + a delay drawn uniformly from [0.5 s, 3 s]. Returns how many were scheduled.
     */
    private static long schedulePaced(Publisher publisher, String topic, ServerClock clock, int rate, long millis)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(SCHEDULERS);
        try {
            int total = (int) (rate * millis / 1000);
            long interval = 1_000_000_000L / rate;
            long start = System.nanoTime();
            List<Future<Long>> done = new ArrayList<>();
            for (int t = 0; t < SCHEDULERS; t++) {
                int first = t;
                done.add(pool.submit(() -> {
                    SplittableRandom random = new SplittableRandom(31L * first + topic.hashCode());
                    byte[] payload = Payloads.make(0, false);
                    long n = 0;
                    for (int i = first; i < total; i += SCHEDULERS) {
                        long at = start + i * interval;
                        long wait;
                        while ((wait = at - System.nanoTime()) > 0) {
                            LockSupport.parkNanos(Math.min(wait, 100_000));
                        }
                        long due = clock.nowMicros() / 1_000 + random.nextLong(MIN_DELAY_MILLIS, MAX_DELAY_MILLIS + 1);
                        publisher.publishAt(topic, Message.builder("bench", payload)
                                .header(HEADER_DUE, Long.toString(due)).build(), Instant.ofEpochMilli(due));
                        n++;
                    }
                    return n;
                }));
            }
            long n = 0;
            for (Future<Long> f : done) {
                n += f.get();
            }
            return n;
        } finally {
            pool.shutdownNow();
        }
    }
}
