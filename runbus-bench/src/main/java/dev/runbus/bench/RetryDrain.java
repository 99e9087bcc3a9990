package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.RetryPolicy;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import dev.runbus.bench.DelayScenario.Retry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * The retry drains of the delay scenario: every {@value #FAIL_EVERY}th message fails on its first attempt and
 * succeeds on its second, retried after a fixed delay or by the reclaimer once idle; or no failures at all.
 */
final class RetryDrain {

    static final int FAIL_EVERY = 10;
    static final long RETRY_DELAY_MILLIS = 100;
    /** The shortest sensible idle-based retry: takeover after 1 s, the reclaimer looking every 200 ms. */
    static final long ON_IDLE_MIN_IDLE_MILLIS = 1_000;
    static final long ON_IDLE_CLAIM_INTERVAL_MILLIS = 200;

    private RetryDrain() {
    }

    enum Kind {
        CLEAN("no failures"),
        FIXED("1 in " + FAIL_EVERY + " fails once, fixed(" + RETRY_DELAY_MILLIS + " ms)"),
        ON_IDLE("1 in " + FAIL_EVERY + " fails once, onIdle()");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    /**
     * One drain, C = 4 (four subscriptions of concurrency 1 on one bus, as the runbus contender runs them): the
     * messages published in pipelined batches once the consumers wait; done when every message succeeded and the
     * group has nothing pending.
     */
    static Retry measure(Env env, Kind kind, int messages) {
        String slug = "delay-retry";
        Target t = new Target(env.prefix(slug), "retry-" + env.nextId(), "bench");
        Bus bus = DelayScenario.bus(env, slug, BusConfig.DEFAULT_DELAY_POLL_INTERVAL.toMillis());
        List<Subscription> subs = new ArrayList<>();
        try {
            SubscribeOptions.Builder options = SubscribeOptions.builder().concurrency(1)
                    .blockTime(Duration.ofMillis(100));
            if (kind == Kind.FIXED) {
                options.retryPolicy(RetryPolicy.fixed(Duration.ofMillis(RETRY_DELAY_MILLIS)));
            } else if (kind == Kind.ON_IDLE) {
                options.retryPolicy(RetryPolicy.onIdle()).minIdle(Duration.ofMillis(ON_IDLE_MIN_IDLE_MILLIS))
                        .claimInterval(Duration.ofMillis(ON_IDLE_CLAIM_INTERVAL_MILLIS));
            }
            boolean failing = kind != Kind.CLEAN;
            LongAdder succeeded = new LongAdder();
            ConcurrentHashMap<String, Long> failedAt = new ConcurrentHashMap<>();
            Histogram retryMicros = new ConcurrentHistogram(600_000_000L, 3);
            AtomicLong lastRetryDone = new AtomicLong();
            AtomicLong firstAttempts = new AtomicLong();
            AtomicLong firstPassDone = new AtomicLong();
            env.admin.createGroup(t.streamKey(), t.group());
            for (int i = 0; i < 4; i++) {
                subs.add(bus.subscribe(t.topic(), t.group(), "c" + i, d -> {
                    if (d.attempt() == 1 && firstAttempts.incrementAndGet() == messages) {
                        firstPassDone.set(System.nanoTime());
                    }
                    if (failing && Payloads.isPoison(d.message().payload())) {
                        if (d.attempt() == 1) {
                            failedAt.put(d.message().id(), System.nanoTime());
                            throw new IllegalStateException("fails on its first attempt");
                        }
                        long now = System.nanoTime();
                        Long first = failedAt.get(d.message().id());
                        if (first != null) {
                            retryMicros.recordValue(Math.min((now - first) / 1_000, 600_000_000L));
                        }
                        lastRetryDone.accumulateAndGet(now, Math::max);
                    }
                    succeeded.increment();
                }, options.build()));
            }
            Env.sleep(300);
            long t0 = System.nanoTime();
            env.producer.publish(t.streamKey(), 0, messages, i -> i % FAIL_EVERY == FAIL_EVERY - 1);
            long deadline = t0 + TimeUnit.SECONDS.toNanos(Math.max(60, messages / 1_000));
            while (succeeded.sum() < messages || env.admin.pending(t.streamKey(), t.group()) > 0) {
                if (System.nanoTime() > deadline) {
                    Progress.say("  retry drain (%s): timed out, %,d of %,d succeeded", kind.label, succeeded.sum(),
                            messages);
                    return Retry.FAILED;
                }
                LockSupport.parkNanos(500_000);
            }
            long t1 = System.nanoTime();
            boolean retried = retryMicros.getTotalCount() > 0;
            return new Retry(messages / ((t1 - t0) / 1e9), messages / ((firstPassDone.get() - t0) / 1e9),
                    retried ? (lastRetryDone.get() - t0) / 1e9 : Double.NaN,
                    retried ? retryMicros.getValueAtPercentile(50) / 1_000.0 : Double.NaN,
                    retried ? retryMicros.getMaxValue() / 1_000.0 : Double.NaN);
        } catch (Exception e) {
            Progress.say("  retry drain (%s) failed: %s", kind.label, e);
            return Retry.FAILED;
        } finally {
            subs.forEach(Subscription::close);
            bus.close();
            env.admin.deleteMatching(t.keyPattern());
        }
    }
}
