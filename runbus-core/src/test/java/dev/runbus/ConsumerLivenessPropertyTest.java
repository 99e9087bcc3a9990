package dev.runbus;

import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A property: whatever its handler does (fail, interrupt its own thread and throw or return, run slowly) and
 * even when Redis restarts empty under it, a consumer never stops making progress — every message published
 * after the restart is handled within a deadline, and nothing stays pending. Each seed draws another mix of
 * behaviours per delivery and another moment for the restart. Runs on a Redis of its own, since it restarts it: the
 * installed redis-server, and Redis 6.2 (XAUTOCLAIM's two-element reply, deleted entries kept pending).
 */
@OnDeployments({LOCAL, REDIS_62})
class ConsumerLivenessPropertyTest {

    static final Duration DEADLINE = Duration.ofSeconds(20);
    static final int BEFORE_RESTART = 120;
    static final int AFTER_RESTART = 80;

    @Parameter
    Deployment deployment;

    /** The server of the deployment's run, which its tests restart; the runs of the class go one after another. */
    static RedisServerProcess redis;

    @BeforeParameterizedClassInvocation
    static void startRedis(Deployment deployment) {
        redis = deployment.startServer();
    }

    @AfterParameterizedClassInvocation
    static void stopRedis() {
        redis.close();
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
    @Timeout(60)
    void aConsumerUnderRandomFaultsKeepsMakingProgress(long seed) {
        SplittableRandom plan = new SplittableRandom(seed);
        int restartAfter = 10 + plan.nextInt(BEFORE_RESTART - 20);
        Set<String> done = ConcurrentHashMap.newKeySet();
        List<String> runnerDeaths = new CopyOnWriteArrayList<>();
        BusListener events = new BusListener() {
            @Override
            public void onLoopError(String loop, Throwable error) {
                if (loop.startsWith("handler runner")) {
                    runnerDeaths.add(loop + ": " + error);
                }
            }
        };
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix("prop-" + seed).listener(events)
                .commandTimeout(Duration.ofSeconds(2)).build())) {
            bus.subscribe("jobs", "g", "c1", d -> behave(seed, d, done), SubscribeOptions.builder().concurrency(4)
                    .batchSize(20).blockTime(Duration.ofMillis(100)).minIdle(Duration.ofMillis(300))
                    .keepAliveInterval(Duration.ofMillis(100)).claimInterval(Duration.ofMillis(50))
                    .maxDeliveries(1000).build());

            publish(bus, "before", BEFORE_RESTART);
            Wait.until(restartAfter + " handled before the restart", DEADLINE, () -> done.size() >= restartAfter);
            redis.restart(); // empty: what was not handled yet is lost with Redis's data, as docs/architecture.md, rule 11 says

            List<String> after = publish(bus, "after", AFTER_RESTART);
            Wait.until("every message published after the restart handled (seed " + seed + ")", DEADLINE,
                    () -> done.containsAll(after));
            Wait.until("nothing left pending (seed " + seed + ")", DEADLINE,
                    () -> bus.inspector().groups("jobs").stream().allMatch(g -> g.pending() == 0));
            assertThat(runnerDeaths).isEmpty();
        }
    }

    /** What the handler does with one delivery: drawn from the seed, the message and its delivery count. */
    private static void behave(long seed, Delivery d, Set<String> done) throws Exception {
        int draw = new SplittableRandom(seed * 1_000_003L + (d.message().id() + "#" + d.deliveryCount()).hashCode())
                .nextInt(100);
        if (draw < 15) {
            throw new IllegalStateException("failed (draw " + draw + ")");
        }
        if (draw < 25) {
            Thread.currentThread().interrupt(); // the interrupt-then-throw idiom
            throw new InterruptedException("interrupted (draw " + draw + ")");
        }
        if (draw < 35) {
            Thread.currentThread().interrupt(); // a watchdog's interrupt racing the handler's return
        } else if (draw < 45) {
            Thread.sleep(20 + draw); // a slow handler
        }
        done.add(d.message().id());
    }

    /** Publishes, retrying while the client reconnects to the restarted server; returns the message ids. */
    private static List<String> publish(Bus bus, String wave, int n) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Message m = Message.builder("job", ("job-" + i).getBytes(StandardCharsets.UTF_8)).id(wave + "-" + i).build();
            Wait.until("published " + m.id(), DEADLINE, () -> {
                try {
                    bus.publisher().publish("jobs", m);
                    return true;
                } catch (RuntimeException notYet) { // the client is reconnecting
                    return false;
                }
            });
            ids.add(m.id());
        }
        return ids;
    }
}
