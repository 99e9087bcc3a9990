package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testing.Recorder;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.models.stream.PendingMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link BatchHandler} subscriptions against the machine's Redis: batch sizes, settling, outcomes. */
class BatchHandlerTest {

    static final Duration WAIT = Duration.ofSeconds(20);

    final RedisTarget target = RedisTarget.local();
    final Recorder events = new Recorder();
    final String topic = "orders";
    String prefix;
    Bus bus;

    @BeforeEach
    void setUp() {
        prefix = "rbbatch-" + UUID.randomUUID().toString().substring(0, 8);
        bus = Bus.connect(BusConfig.builder(target.uri()).keyPrefix(prefix).listener(events).build());
    }

    @AfterEach
    void tearDown() {
        bus.close();
        target.deleteKeys(prefix);
    }

    static SubscribeOptions.Builder options() {
        return SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).minIdle(Duration.ofSeconds(60))
                .claimInterval(Duration.ofMillis(50));
    }

    List<String> publish(int n) {
        return bus.publisher().publishAll(topic, IntStream.range(0, n)
                .mapToObj(i -> Message.of("order.created", ("payload-" + i).getBytes(StandardCharsets.UTF_8)))
                .collect(Collectors.toList()));
    }

    List<PendingMessage> pending(String group) {
        return target.redis().xpending(prefix + ":{" + topic + "}:stream", group, Range.create("-", "+"),
                Limit.from(1000));
    }

    @Test
    void everyEntryIsHandledOnce_inBatchesOfAtMostBatchSize() {
        List<String> ids = publish(500);
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        List<Integer> sizes = new CopyOnWriteArrayList<>();
        bus.subscribeBatch(topic, "g", "c1", batch -> {
            sizes.add(batch.deliveries().size());
            batch.deliveries().forEach(d -> calls.computeIfAbsent(d.streamId(), k -> new AtomicInteger()).incrementAndGet());
        }, options().batchSize(50).concurrency(2).build());

        Wait.until("all 500 handled and acked", WAIT, () -> calls.size() == 500 && pending("g").isEmpty());
        assertThat(calls.keySet()).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(calls.values()).allMatch(c -> c.get() == 1);
        assertThat(sizes).allMatch(s -> s >= 1 && s <= 50);
        assertThat(sizes.stream().mapToInt(Integer::intValue).sum()).isEqualTo(500);
        // Published before the subscription: the first read is a full batch.
        assertThat(sizes.get(0)).isEqualTo(50);
    }

    @Test
    void returningAcksWhatIsNotSettled_failedDeliveriesStayPendingAlone() {
        List<String> ids = publish(10);
        String failing = ids.get(3);
        String alsoFailing = ids.get(7);
        bus.subscribeBatch(topic, "g", "c1", batch -> {
            for (Delivery d : batch.deliveries()) {
                events.record(d);
                if (d.streamId().equals(failing)) {
                    batch.fail(d, new IllegalStateException("bad order"));
                } else if (d.streamId().equals(alsoFailing)) {
                    batch.fail(d, new IllegalArgumentException("worse order"));
                }
            }
        }, options().build());

        Wait.until("two failures reported and the rest acked", WAIT,
                () -> events.failures.size() == 2 && pending("g").size() == 2);
        assertThat(events.failures).containsExactlyInAnyOrder(failing + ":1:RETRY", alsoFailing + ":1:RETRY");
        assertThat(pending("g")).extracting(PendingMessage::getId).containsExactly(failing, alsoFailing);
        assertThat(events.calls()).isEqualTo(10);
    }

    @Test
    void throwingFailsWhatIsNotSettled_andAtMaxDeliveriesDeadLetters() {
        List<String> ids = publish(3);
        String kept = ids.get(0);
        bus.subscribeBatch(topic, "g", "c1", batch -> {
            for (Delivery d : batch.deliveries()) {
                events.record(d);
                if (d.streamId().equals(kept)) {
                    batch.succeed(d);
                }
            }
            throw new IllegalStateException("the database is down");
            // minIdle 1 s, not less: the retries come by takeover, and a claim whose reply takes longer than minIdle
            // lets the reclaimer take an entry again while its first copy runs (docs/architecture.md, Duplicate
            // executions); at 100 ms a busy host ran entry 2 a third time.
        }, options().minIdle(Duration.ofSeconds(1)).maxDeliveries(2).build());

        Wait.until("two dead letters", WAIT, () -> events.deadLetters.size() == 2);
        assertThat(events.deadLetters).extracting(DeadLetter::originalStreamId).containsExactlyInAnyOrder(ids.get(1), ids.get(2));
        assertThat(events.deadLetters).extracting(DeadLetter::reason)
                .containsOnly("java.lang.IllegalStateException: the database is down");
        assertThat(events.failures).containsExactlyInAnyOrder(ids.get(1) + ":1:RETRY", ids.get(2) + ":1:RETRY",
                ids.get(1) + ":2:DEAD_LETTER", ids.get(2) + ":2:DEAD_LETTER");
        assertThat(events.callsByMessageId.get(events.deliveries.get(0).message().id()).get()).isEqualTo(1);
        assertThat(pending("g")).isEmpty();
    }

    @Test
    void anEarlySucceededDeliveryIsAckedBeforeTheCallReturns() {
        List<String> ids = publish(2);
        AtomicBoolean ackedWhileRunning = new AtomicBoolean();
        List<String> seen = new CopyOnWriteArrayList<>();
        bus.subscribeBatch(topic, "g", "c1", batch -> {
            assertThat(batch.deliveries()).hasSize(2);
            Delivery first = batch.deliveries().get(0);
            batch.succeed(first);
            Wait.until("the first acked while the call runs", WAIT,
                    () -> pending("g").stream().noneMatch(p -> p.getId().equals(first.streamId())));
            ackedWhileRunning.set(pending("g").size() == 1);
            batch.deliveries().forEach(d -> seen.add(d.streamId()));
        }, options().build());

        Wait.until("both acked", WAIT, () -> seen.size() == 2 && pending("g").isEmpty());
        assertThat(seen).containsExactlyElementsOf(ids);
        assertThat(ackedWhileRunning).isTrue();
    }

    @Test
    void settlingFromOtherThreadsWhileTheCallWaits() throws Exception {
        publish(40);
        List<String> settledBy = new CopyOnWriteArrayList<>();
        bus.subscribeBatch(topic, "g", "c1", batch -> {
            List<Thread> workers = new ArrayList<>();
            for (Delivery d : batch.deliveries()) {
                Thread t = new Thread(() -> {
                    batch.succeed(d);
                    settledBy.add(d.streamId());
                });
                t.start();
                workers.add(t);
            }
            for (Thread t : workers) {
                t.join();
            }
        }, options().build());

        Wait.until("all 40 settled and acked", WAIT, () -> settledBy.size() == 40 && pending("g").isEmpty());
        assertThat(events.failures).isEmpty();
    }
}
