package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testing.DeadLetterAlarmChild;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BusListener#onDeadLetterDepthRaised}: two buses (each its own connections and state, as two processes
 * have) consume one topic of two partitions; the alarm is heard once when the topic's first dead letter comes,
 * not again for the next, and once more after the dead letters were purged and a new one came. Decided in Redis:
 * neither bus could tell from what it saw itself.
 */
class DeadLetterAlarmTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private final RedisTarget redis = RedisTarget.local();
    private final String prefix = "dl-alarm-" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void tearDown() {
        redis.deleteKeys(prefix);
    }

    @Test
    void raisedOncePerRiseFromZero_acrossTwoBuses() throws Exception {
        Heard watch = new Heard();
        List<String> raised = watch.raised;
        AtomicInteger deadLetters = watch.deadLetters;
        BusConfig config = BusConfig.builder(redis.uri()).keyPrefix(prefix).partitions("jobs", 2).build();
        SubscribeOptions options = SubscribeOptions.builder().maxDeliveries(1).blockTime(Duration.ofMillis(100))
                .build();
        Handler poisonFails = d -> {
            if (d.message().type().equals("poison")) {
                throw new IllegalStateException("poison");
            }
        };
        try (Bus a = Bus.connect(config); Bus b = Bus.connect(config);
             AutoCloseable wa = a.addListener(watch); AutoCloseable wb = b.addListener(watch);
             Subscription sa = a.subscribe("jobs", "g", "a", poisonFails, options);
             Subscription sb = b.subscribe("jobs", "g", "b", poisonFails, options)) {
            publish(a, "k1", "poison");
            Wait.until("the first dead letter", WAIT, () -> deadLetters.get() == 1);
            assertThat(raised).containsExactly("jobs");

            publish(a, "k2", "poison"); // another key: the other partition, maybe the other bus
            publish(b, "k3", "poison");
            Wait.until("two more dead letters", WAIT, () -> deadLetters.get() == 3);
            assertThat(raised).as("no new rise while the depth stayed above zero").containsExactly("jobs");

            assertThat(b.deadLetters().purgeAll("jobs")).isEqualTo(3);
            assertThat(raised).as("a purge to zero raises nothing").containsExactly("jobs");
            publish(b, "k1", "poison");
            Wait.until("a dead letter after the purge", WAIT, () -> deadLetters.get() == 4);
            assertThat(raised).as("the depth rose from zero again").containsExactly("jobs", "jobs");

            String id = a.deadLetters().list("jobs", null, 10).get(0).id();
            publish(a, "k2", "poison");
            Wait.until("one more", WAIT, () -> deadLetters.get() == 5);
            assertThat(a.deadLetters().purge("jobs", id)).isTrue(); // one left: still above zero
            publish(a, "k3", "poison");
            Wait.until("and another", WAIT, () -> deadLetters.get() == 6);
            assertThat(raised).as("a purge that left some raised nothing and cleared nothing").hasSize(2);
        }
    }

    /**
     * Two processes: the child alone makes the topic's first dead letter and hears the alarm; then both consume, and
     * more dead letters (from either) raise nothing until a purge brought the depth to zero, after which the next
     * one raises it once more, in whichever process made it.
     */
    @Test
    void raisedOncePerRiseFromZero_acrossTwoProcesses() throws Exception {
        Heard watch = new Heard();
        List<String> raised = watch.raised;
        AtomicInteger deadLetters = watch.deadLetters;
        BusConfig config = BusConfig.builder(redis.uri()).keyPrefix(prefix).partitions("jobs", 2).build();
        Handler poisonFails = d -> {
            if (d.message().type().equals("poison")) {
                throw new IllegalStateException("poison");
            }
        };
        SubscribeOptions options = SubscribeOptions.builder().maxDeliveries(1).blockTime(Duration.ofMillis(100))
                .build();
        try (ChildJvm child = ChildJvm.start(DeadLetterAlarmChild.class, redis.uri(), prefix);
             Bus bus = Bus.connect(config); AutoCloseable w = bus.addListener(watch)) {
            child.awaitLine("ready", WAIT);
            publish(bus, "k0", "poison");
            child.awaitLine("raised jobs", WAIT);
            // The alarm is heard before the dead letter itself (the bus's alarm is its first listener), so the
            // child's "dead" line can follow its "raised" line.
            Wait.until("the child's dead letter", WAIT, () -> count(child, "dead ") > 0);
            assertThat(count(child, "dead ")).isEqualTo(1);

            try (Subscription s = bus.subscribe("jobs", "g", "parent", poisonFails, options)) {
                for (int i = 1; i < 8; i++) {
                    publish(bus, "k" + i, "poison");
                }
                Wait.until("seven more dead letters, by either process", WAIT,
                        () -> deadLetters.get() + count(child, "dead ") == 8);
                assertThat(raised.size() + count(child, "raised ")).as("one alarm while the depth stayed up")
                        .isEqualTo(1);

                assertThat(bus.deadLetters().purgeAll("jobs")).isEqualTo(8);
                for (int i = 0; i < 8; i++) {
                    publish(bus, "k" + i, "poison");
                }
                Wait.until("eight dead letters after the purge", WAIT,
                        () -> deadLetters.get() + count(child, "dead ") == 16);
                assertThat(raised.size() + count(child, "raised ")).as("one more alarm after the depth fell to zero")
                        .isEqualTo(2);
            }
        }
    }

    /**
     * A dead letter frees its entry's slot once Redis answered the move, before listeners hear of it. With
     * {@code concurrency} 1 and {@code batchSize} 1 a subscription holds three entries at most; a listener that does
     * not return on the first of three poison entries holds up the other two moves (one thread makes them), and
     * the next entry's handler still runs because the first entry's slot is free. (Hearing of a dead letter can cost
     * round trips of its own: the alarm's {@code SET NX} is one.)
     */
    @Test
    void aListenerStillHearingADeadLetterDoesNotHoldTheSlot() throws Exception {
        BusConfig config = BusConfig.builder(redis.uri()).keyPrefix(prefix).build();
        SubscribeOptions options = SubscribeOptions.builder().concurrency(1).batchSize(1).maxDeliveries(1)
                .blockTime(Duration.ofMillis(100)).build();
        CountDownLatch heard = new CountDownLatch(1);
        CountDownLatch listenerMayReturn = new CountDownLatch(1);
        AtomicInteger handledAfterPoison = new AtomicInteger();
        BusListener slowListener = new BusListener() {
            @Override
            public void onDeadLetter(DeadLetter d) {
                heard.countDown();
                try {
                    listenerMayReturn.await(3 * WAIT.toMillis(), TimeUnit.MILLISECONDS); // longer than the test waits
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        Handler handler = d -> {
            if (d.message().type().equals("poison")) {
                throw new IllegalStateException("poison");
            }
            handledAfterPoison.incrementAndGet();
        };
        try (Bus bus = Bus.connect(config); AutoCloseable l = bus.addListener(slowListener);
             Subscription s = bus.subscribe("jobs", "g", "c", handler, options)) {
            publish(bus, "k1", "poison");
            publish(bus, "k1", "poison");
            publish(bus, "k1", "poison");
            assertThat(heard.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            publish(bus, "k1", "good");
            Wait.until("the next entry handled while the listener still hears the dead letter", WAIT,
                    () -> handledAfterPoison.get() == 1);
            assertThat(listenerMayReturn.getCount()).as("the listener has not returned").isEqualTo(1);
            listenerMayReturn.countDown(); // before close, which waits for the dead-letter thread
        } finally {
            listenerMayReturn.countDown();
        }
    }

    /** What a bus told this test; added after the alarm's own listener, so it hears a dead letter after its check. */
    private static final class Heard implements BusListener {
        final List<String> raised = new CopyOnWriteArrayList<>();
        final AtomicInteger deadLetters = new AtomicInteger();

        @Override
        public void onDeadLetterDepthRaised(String topic) {
            raised.add(topic);
        }

        @Override
        public void onDeadLetter(DeadLetter d) {
            deadLetters.incrementAndGet();
        }
    }

    private static int count(ChildJvm child, String prefix) {
        return (int) child.lines().stream().filter(l -> l.startsWith(prefix)).count();
    }

    private static void publish(Bus bus, String key, String type) {
        bus.publisher().publish("jobs", key, Message.of(type, "x".getBytes(StandardCharsets.UTF_8)));
    }
}
