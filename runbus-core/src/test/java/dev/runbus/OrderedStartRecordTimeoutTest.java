package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An ordered entry's awaited start record that times out (its reply lost: the SET ran) does not count a start that
 * never happened: the handler starts all the same, so the record names a start that did. Before, the step was given
 * up and started over, and the next catching up counted the armed record, a delivery no handler started. On a Redis
 * of its own behind a proxy that loses the replies from the start record's call on (the scripts run as functions, so
 * the call names its function).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class OrderedStartRecordTimeoutTest {

    private OwnRedis redis;
    private TcpProxy proxy;
    private Bus bus;
    private final String prefix = "start-timeout-" + UUID.randomUUID();

    @BeforeEach
    void setUp() {
        redis = OwnRedis.process();
        proxy = TcpProxy.before(redis.uri());
    }

    @AfterEach
    void tearDown() {
        if (bus != null) {
            bus.close();
        }
        proxy.close();
        redis.close();
    }

    @Test
    void aRetriedEntryWhoseStartRecordTimedOut_runsAtItsOwnAttempt() {
        List<String> errors = new CopyOnWriteArrayList<>();
        List<Long> attempts = new CopyOnWriteArrayList<>();
        bus = Bus.connect(BusConfig.builder(proxy.uri()).keyPrefix(prefix).scriptMode(ScriptMode.FUNCTIONS)
                .commandTimeout(Duration.ofSeconds(1)).listener(new BusListener() {
                    @Override
                    public void onLoopError(String loop, Throwable error) {
                        errors.add(loop);
                    }
                }).build());
        CountDownLatch firstMayFail = new CountDownLatch(1);
        bus.subscribe("orders", "g", "c1", d -> {
            attempts.add(d.attempt());
            if (attempts.size() == 1) {
                firstMayFail.await();
                throw new IllegalStateException("first attempt fails");
            }
        }, SubscribeOptions.builder().ordered(true).maxDeliveries(5).leaseTime(Duration.ofSeconds(30))
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(200))).blockTime(Duration.ofMillis(200)).build());
        String id = bus.publisher().publish("orders", Message.builder("job", "x".getBytes(StandardCharsets.UTF_8))
                .key("k").build());
        // The first start's record (sent without waiting) has run: the next call of ordered_start is the retry's, and
        // its reply, and what follows, is lost.
        Wait.until("the first start recorded", Duration.ofSeconds(30),
                () -> id.equals(redis.redis().get(prefix + ":{orders}:started:g")));
        proxy.swallowRepliesFrom("_ordered_start");
        firstMayFail.countDown();

        Wait.until("a call failed (the retry's start record timed out)", Duration.ofSeconds(30),
                () -> !errors.isEmpty() || attempts.size() > 1);
        proxy.swallowReplies(false);
        proxy.dropConnections(); // a lost reply leaves the connection out of step
        Wait.until("the entry handled again", Duration.ofSeconds(30), () -> attempts.size() > 1);
        assertThat(attempts.get(1)).as("the second handler call's attempt (calls: " + attempts + ")").isEqualTo(2);
    }
}
