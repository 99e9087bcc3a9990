package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.Publisher;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import dev.runbus.bench.DelayScenario.Move;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The move measurement of the delay scenario: a backlog of due entries moved into the stream by one bus that
 * subscribes, against the same number appended by {@code publishAll}.
 */
final class DelayMoves {

    /** Threads scheduling the backlog, each {@code publish} with a delay waiting for its reply. */
    static final int SCHEDULERS = 8;

    private DelayMoves() {
    }

    /**
     * N entries due at once, moved by one newly subscribed bus, against the same N appended by publishAll while a
     * subscription of the same bus reads them (as one read the moved entries).
     */
    static Move measure(Env env) {
        String slug = "delay-move";
        String moveTopic = "move-" + env.nextId();
        String publishTopic = "publish-" + env.nextId();
        int n = env.sizes.delayMoveEntries();
        Bus scheduler = DelayScenario.bus(env, slug, BusConfig.DEFAULT_DELAY_POLL_INTERVAL.toMillis());
        Bus mover = DelayScenario.bus(env, slug, BusConfig.DEFAULT_DELAY_POLL_INTERVAL.toMillis());
        List<Subscription> subs = new ArrayList<>();
        SubscribeOptions options = SubscribeOptions.builder().blockTime(Duration.ofMillis(100)).build();
        try {
            byte[] payload = Payloads.make(0, false);
            long t0 = System.nanoTime();
            scheduleNow(scheduler.publisher(), moveTopic, payload, n);
            double scheduledRate = n / ((System.nanoTime() - t0) / 1e9);
            String stream = env.prefix(slug) + ":{" + moveTopic + "}:stream";
            long t1 = System.nanoTime();
            subs.add(mover.subscribe(moveTopic, "movers", "m0", d -> { }, options));
            long deadline = t1 + TimeUnit.SECONDS.toNanos(Math.max(60, n / 1_000));
            while (env.admin.length(stream) < n) {
                if (System.nanoTime() > deadline) {
                    Progress.say("  moves: timed out, %,d of %,d in the stream", env.admin.length(stream), n);
                    return Move.FAILED;
                }
                LockSupport.parkNanos(500_000);
            }
            double movedRate = n / ((System.nanoTime() - t1) / 1e9);
            // The same consumer reads what publishAll appends, as it read what the mover appended.
            subs.add(mover.subscribe(publishTopic, "movers", "m1", d -> { }, options));
            Env.sleep(300);
            Publisher publisher = scheduler.publisher();
            List<Message> batch = new ArrayList<>(Producer.BATCH);
            long t2 = System.nanoTime();
            for (int done = 0; done < n; done += batch.size()) {
                batch.clear();
                for (int i = 0; i < Math.min(Producer.BATCH, n - done); i++) {
                    batch.add(Message.of("bench", payload));
                }
                publisher.publishAll(publishTopic, batch);
            }
            double publishRate = n / ((System.nanoTime() - t2) / 1e9);
            return new Move(scheduledRate, movedRate, publishRate);
        } catch (Exception e) {
            Progress.say("  moves failed: %s", e);
            return Move.FAILED;
        } finally {
            subs.forEach(Subscription::close);
            mover.close();
            scheduler.close();
            env.admin.deleteMatching(env.prefix(slug) + ":{" + moveTopic + "}*");
            env.admin.deleteMatching(env.prefix(slug) + ":{" + publishTopic + "}*");
        }
    }

    /** {@code n} entries with delay 0 from {@link #SCHEDULERS} threads, each call waiting for its reply. */
    private static void scheduleNow(Publisher publisher, String topic, byte[] payload, int n) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(SCHEDULERS);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < SCHEDULERS; t++) {
                int first = t;
                done.add(pool.submit(() -> {
                    for (int i = first; i < n; i += SCHEDULERS) {
                        publisher.publish(topic, Message.of("bench", payload), Duration.ZERO);
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
