package dev.runbus;

import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;

/**
 * Retry policies: a failed delivery is acked and rescheduled with its attempt count, so that the retry delay no
 * longer depends on {@code minIdle} and the poison threshold counts attempts across reschedules. {@code minIdle} is
 * set far above the delays in these tests: a retry that came from a takeover would come much too late.
 */
@OnDeployments({LOCAL, REDIS_62})
class RetryWithBackoffTest {

    /**
     * How late the test accepts a retry beyond its delay: far below {@code minIdle} (a minute), so that a retry that
     * came from a takeover fails it, and far above what a busy host adds (661 ms once for a 200 ms delay, beside two
     * CPU hogs): the test asserts where a retry comes from and that it never comes early, not the host's speed.
     */
    private static final long SLACK_MILLIS = 10_000;

    final String prefix = "test-retry-" + UUID.randomUUID();
    private final List<Bus> buses = new ArrayList<>();

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    @AfterEach
    void cleanUp() {
        buses.forEach(Bus::close);
        target().deleteKeys(prefix);
    }

    private Bus bus() {
        Bus bus = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix).build());
        buses.add(bus);
        return bus;
    }

    private static SubscribeOptions.Builder options(RetryPolicy retry, int maxDeliveries) {
        return SubscribeOptions.builder().retryPolicy(retry).maxDeliveries(maxDeliveries)
                .minIdle(Duration.ofMinutes(1)).blockTime(Duration.ofMillis(500));
    }

    /** One handler call: the attempt, the delivery count and when it ran. */
    private record Call(long attempt, long deliveryCount, long atMillis, String streamId) {
    }

    @Test
    void anAlwaysFailingEntryRunsFourTimesWithExponentialBackoffThenIsDeadLetteredWithFourAttempts() {
        Bus bus = bus();
        List<Call> calls = new CopyOnWriteArrayList<>();
        bus.subscribe("pay", "g", "c", d -> {
            calls.add(new Call(d.attempt(), d.deliveryCount(), System.nanoTime() / 1_000_000, d.streamId()));
            throw new IllegalStateException("always fails");
        }, options(RetryPolicy.exponential(Duration.ofMillis(100), 2, Duration.ofSeconds(1), 0), 4).build());
        String id = bus.publisher().publish("pay", Message.of("t", "x".getBytes(StandardCharsets.UTF_8)));

        Wait.until("the entry dead-lettered", Duration.ofSeconds(15),
                () -> !bus.deadLetters().list("pay", null, 10).isEmpty());
        assertThat(calls).extracting(Call::attempt).containsExactly(1L, 2L, 3L, 4L);
        assertThat(calls).extracting(Call::deliveryCount).as("each copy is a new entry, delivered once")
                .containsOnly(1L);
        assertThat(calls.get(0).streamId()).isEqualTo(id);
        long[] expectedGaps = {100, 200, 400};
        for (int i = 0; i < expectedGaps.length; i++) {
            long gap = calls.get(i + 1).atMillis() - calls.get(i).atMillis();
            System.out.printf("RETRY[%s] attempt %d -> %d after %d ms (delay %d ms)%n", target().name(), i + 1, i + 2,
                    gap, expectedGaps[i]);
            // Less 1 ms: the due time is whole milliseconds of the Redis clock and the calls are stamped in whole
            // milliseconds here, so a wait of exactly the delay can read one short.
            assertThat(gap).as("gap between attempt %d and %d", i + 1, i + 2)
                    .isBetween(expectedGaps[i] - 1, expectedGaps[i] + SLACK_MILLIS);
        }
        DeadLetter dl = bus.deadLetters().list("pay", null, 10).get(0);
        assertThat(dl.deliveries()).as("attempts recorded on the dead letter").isEqualTo(4);
        assertThat(dl.reason()).contains("always fails");
        assertThat(calls).hasSize(4);
        String stream = prefix + ":{pay}:stream";
        assertThat(target().redis().xpending(stream, "g").getCount()).as("nothing left pending").isZero();
        assertThat(target().redis().xlen(stream)).as("the entry and its three rescheduled copies").isEqualTo(4);
        assertThat(bus.scheduled().count("pay")).isZero();
    }

    @Test
    void aRetryIsForTheGroupThatFailedOnlyAndCarriesItsAttempts() {
        Bus bus = bus();
        AtomicInteger failing = new AtomicInteger();
        List<Long> attempts = new CopyOnWriteArrayList<>();
        List<String> other = new CopyOnWriteArrayList<>();
        bus.subscribe("orders", "billing", "b1", d -> {
            attempts.add(d.attempt());
            if (failing.incrementAndGet() <= 2) {
                throw new IllegalStateException("not yet");
            }
        }, options(RetryPolicy.fixed(Duration.ofMillis(100)), 5).build());
        bus.subscribe("orders", "audit", "a1", d -> other.add(d.streamId()),
                options(RetryPolicy.onIdle(), 3).build());
        bus.publisher().publish("orders", Message.of("t", new byte[] {1}));

        Wait.until("billing succeeded on its third attempt", Duration.ofSeconds(10), () -> attempts.size() == 3);
        assertThat(attempts).containsExactly(1L, 2L, 3L);
        String stream = prefix + ":{orders}:stream";
        assertThat(target().redis().xlen(stream)).as("the message and its two rescheduled copies").isEqualTo(3);
        String last = target().redis().xrevrange(stream, io.lettuce.core.Range.create("-", "+"),
                io.lettuce.core.Limit.from(1)).get(0).getId();
        Wait.until("audit read every entry and acked it", Duration.ofSeconds(10), () -> bus.inspector().groups("orders")
                .stream().anyMatch(g -> g.name().equals("audit") && last.equals(g.lastDeliveredId()) && g.pending() == 0));
        assertThat(other).as("the other group handled the message once, and none of the retries").hasSize(1);
        // Acked after the handler returned, batched: waited for, not expected at once.
        Wait.until("billing acked its third attempt", Duration.ofSeconds(10),
                () -> target().redis().xpending(stream, "billing").getCount() == 0);
    }

    @Test
    void onAnOrderedPartitionARetryHoldsThePartitionForItsDelay() {
        Bus bus = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix).partitions("seq", 2).build());
        buses.add(bus);
        List<String> log = new CopyOnWriteArrayList<>();
        List<Long> times = new CopyOnWriteArrayList<>();
        AtomicInteger failuresLeft = new AtomicInteger(2);
        bus.subscribe("seq", "g", "c", d -> {
            String name = new String(d.message().payload(), StandardCharsets.UTF_8);
            log.add(name + "#" + d.attempt());
            times.add(System.nanoTime() / 1_000_000);
            if (name.equals("a") && failuresLeft.getAndDecrement() > 0) {
                throw new IllegalStateException("a fails twice");
            }
        }, options(RetryPolicy.fixed(Duration.ofMillis(300)), 5).ordered(true).build());
        Publisher p = bus.publisher();
        p.publish("seq", "k", Message.of("t", "a".getBytes(StandardCharsets.UTF_8)));
        p.publish("seq", "k", Message.of("t", "b".getBytes(StandardCharsets.UTF_8)));

        Wait.until("both handled", Duration.ofSeconds(15), () -> log.contains("b#1"));
        assertThat(log).containsExactly("a#1", "a#2", "a#3", "b#1");
        assertThat(times.get(1) - times.get(0)).as("first retry delay").isGreaterThanOrEqualTo(300);
        assertThat(times.get(2) - times.get(1)).as("second retry delay").isGreaterThanOrEqualTo(300);
        assertThat(bus.scheduled().count("seq")).as("ordered retries stay in place").isZero();
    }
}
