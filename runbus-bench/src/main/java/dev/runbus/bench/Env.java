package dev.runbus.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntPredicate;

/**
 * What every scenario shares: options, the admin connection, the producer, unique names, the contenders, and
 * the two measurements several scenarios make (a drain, and waiting until a stream is fully acknowledged).
 */
final class Env implements AutoCloseable {

    final BenchOptions options;
    final BenchOptions.Sizes sizes;
    final RedisAdmin admin;
    final Producer producer;
    /** First part of every key and schema this process creates. */
    final String base;
    /** The order of the contenders in each round. */
    final RoundOrder order;
    private final AtomicInteger sequence = new AtomicInteger();

    Env(BenchOptions options) {
        this.options = options;
        this.sizes = options.sizes();
        this.admin = new RedisAdmin(options.redisUri());
        this.producer = new Producer(admin.client());
        this.base = "runbus-bench-" + ProcessHandle.current().pid();
        this.order = new RoundOrder(options.seed());
    }

    String prefix(String slug) {
        return base + "-" + slug;
    }

    int nextId() {
        return sequence.incrementAndGet();
    }

    /** A fresh stream for one measurement of {@code c}. */
    Target target(Contender c, String scenario) {
        return new Target(c.keyPrefix(), scenario + "-" + nextId(), "bench");
    }

    /** The five contenders, opened now; close each when the scenario is done. runbus first. */
    List<Contender> openContenders() {
        List<Contender> list = new ArrayList<>();
        String uri = options.redisUri();
        list.add(new RunbusContender(uri, prefix("runbus")));
        if (admin.hasRedis8Commands()) {
            list.add(RunbusContender.olderPath(uri, prefix("runbus-80")));
        }
        list.add(new LettuceLoopContender(uri, prefix("lettuce")));
        list.add(new RedissonContender(uri, prefix("redisson")));
        list.add(new SpringContender(uri, prefix("spring")));
        list.add(new JedisNaiveContender(uri, prefix("jedis")));
        return list;
    }

    static void closeAll(List<? extends Contender> contenders) {
        for (Contender c : contenders) {
            try {
                c.close();
            } catch (RuntimeException e) {
                System.err.println("closing " + c.name() + ": " + e);
            }
        }
    }

    /**
     * One drain: C consumers wait on an empty stream; {@code messages} are published in pipelined batches;
     * the figure is messages per second from the first publish until the handlers saw every message and the
     * group's pending list is empty (every ack confirmed by Redis). NaN when it did not finish in time.
     */
    double drain(Contender c, int consumers, int messages, IntPredicate poison, String scenario) {
        return drain(c, consumers, messages, poison, 0, scenario);
    }

    /**
     * A drain that ends when at most {@code leftPending} entries are still pending (poison messages a
     * consumer failed and left for a later retry).
     */
    @SuppressWarnings("try") // the consumers only need to run, and to stop afterwards
    double drain(Contender c, int consumers, int messages, IntPredicate poison, long leftPending, String scenario) {
        Target t = target(c, scenario);
        admin.createGroup(t.streamKey(), t.group());
        Probe probe = Probe.counting();
        try (Contender.Consumers running = c.start(t, consumers, probe)) {
            sleep(300);
            long t0 = System.nanoTime();
            producer.publish(t.streamKey(), 0, messages, poison);
            awaitAcked(probe, messages, t, Math.max(60_000, messages / 1_000 * 1_000L), leftPending);
            long t1 = System.nanoTime();
            return messages / ((t1 - t0) / 1e9);
        } catch (TimeoutException e) {
            Progress.say("  %s, %d consumers: %s", c.name(), consumers, e.getMessage());
            return Double.NaN;
        } catch (Exception e) {
            Progress.say("  %s, %d consumers failed: %s", c.name(), consumers, e);
            return Double.NaN;
        } finally {
            admin.deleteMatching(t.keyPattern());
        }
    }

    /** Waits until the handlers saw {@code n} messages and the group has nothing pending. */
    void awaitAcked(Probe probe, long n, Target t, long timeoutMillis) throws TimeoutException {
        awaitAcked(probe, n, t, timeoutMillis, 0);
    }

    /** Waits until the handlers saw {@code n} messages and at most {@code leftPending} entries are pending. */
    void awaitAcked(Probe probe, long n, Target t, long timeoutMillis, long leftPending) throws TimeoutException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (probe.handledCount() < n) {
            check(deadline, () -> "handled " + probe.handledCount() + " of " + n);
            LockSupport.parkNanos(500_000);
        }
        long pending;
        while ((pending = admin.pending(t.streamKey(), t.group())) > leftPending) {
            long p = pending;
            check(deadline, () -> p + " still pending");
            LockSupport.parkNanos(500_000);
        }
    }

    private static void check(long deadline, java.util.function.Supplier<String> state) throws TimeoutException {
        if (System.nanoTime() > deadline) {
            throw new TimeoutException("timed out: " + state.get());
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public void close() {
        try {
            admin.deleteMatching(base + "*");
        } finally {
            producer.close();
            admin.close();
        }
    }
}
