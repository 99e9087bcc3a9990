package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testing.PoisonConsumer;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Supervisor;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A message whose handler kills its process (an OOM kill, a native crash, a library's {@code System.exit}) costs its
 * neighbours nothing: a delivery counts when its handler starts, not when a batch or a chunk begins, and an entry
 * started {@code maxDeliveries} times without an outcome runs once more alone among its bus's handlers, so that one
 * that merely ran beside the poison when the process died is never dead-lettered for it. The consumer runs in a
 * child JVM ({@link PoisonConsumer}) restarted under the same name after each death, as a supervisor would.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PoisonThatKillsItsProcessTest {

    private static final int MAX_DELIVERIES = 3;

    private final String prefix = "test-poison-kills-" + UUID.randomUUID();
    private final String topic = "jobs";
    private final List<ChildJvm> children = new ArrayList<>();

    RedisTarget target() {
        return RedisTarget.local();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (ChildJvm c : children) {
            c.kill();
        }
        target().deleteKeys(prefix);
    }

    /** Issue's case (a): the first handler of a read of ten blocks; only its start is in the record. */
    @Test
    void whileTheFirstHandlerOfAReadRuns_theStartRecordHoldsItsStartOnly() throws Exception {
        assertOneStartWhileTheFirstRuns(false);
    }

    /** The same through a batch handler that starts each delivery itself, as the runs layer's worker does. */
    @Test
    void aBatchHandlerThatStartsEachDelivery_hasOnlyTheStartedOnesCounted() throws Exception {
        assertOneStartWhileTheFirstRuns(true);
    }

    /**
     * A batch handler that starts each delivery counts the start in a store of its own after {@code starting} (the
     * runs worker: an attempt in PostgreSQL). That count must not run ahead of the bus's, so {@code starting} returns
     * once the first start's record has landed: here Redis holds every write for a second when the handler starts,
     * and the record is in Redis as soon as {@code starting} returns (without the wait it returns at once, before it).
     */
    @Test
    void aBatchHandlerThatStartsEachDelivery_findsAFirstStartRecordedWhenStartingReturns() throws Exception {
        String starts = prefix + ":{" + topic + "}:starts:g";
        CountDownLatch handed = new CountDownLatch(1);
        CountDownLatch paused = new CountDownLatch(1);
        List<Boolean> recordedOnReturn = new CopyOnWriteArrayList<>();
        SubscribeOptions options = SubscribeOptions.builder().concurrency(1).batchSize(1).build();
        // A Redis of the test's own: the pause must not hold up the other tests' writes.
        try (OwnRedis own = OwnRedis.process();
             Bus bus = Bus.connect(BusConfig.builder(own.uri()).keyPrefix(prefix).build())) {
            String id = bus.publisher().publish(topic, Message.of("job", "m".getBytes(StandardCharsets.UTF_8)));
            try (Subscription s = bus.subscribeBatch(topic, "g", "c1", new BatchHandler() {
                @Override
                public void handle(Batch b) throws Exception {
                    handed.countDown();
                    paused.await();
                    for (Delivery d : b.deliveries()) {
                        b.starting(d);
                        recordedOnReturn.add(own.redis().hexists(starts, d.streamId()));
                        b.succeed(d);
                    }
                }

                @Override
                public boolean startsEachDelivery() {
                    return true;
                }
            }, options)) {
                assertThat(handed.await(30, TimeUnit.SECONDS)).as("the batch handed over").isTrue();
                // CLIENT PAUSE 1000 WRITE: reads go on, writes wait a second
                own.redis().dispatch(CommandType.CLIENT, new StatusOutput<>(StringCodec.UTF8),
                        new CommandArgs<>(StringCodec.UTF8).add("PAUSE").add(1_000).add("WRITE"));
                paused.countDown();
                Wait.until("the delivery acked", Duration.ofSeconds(30),
                        () -> own.redis().xpending(prefix + ":{" + topic + "}:stream", "g").getCount() == 0);
                assertThat(recordedOnReturn).as("start of %s in the record when starting returned", id)
                        .containsExactly(true);
            }
        }
    }

    private void assertOneStartWhileTheFirstRuns(boolean batch) throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        SubscribeOptions options = SubscribeOptions.builder().concurrency(1).batchSize(10).build();
        try (Bus bus = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix).build())) {
            for (int i = 0; i < 10; i++) {
                bus.publisher().publish(topic, Message.of("job", ("m" + i).getBytes(StandardCharsets.UTF_8)));
            }
            Handler blockFirst = d -> {
                if (new String(d.message().payload(), StandardCharsets.UTF_8).equals("m0")) {
                    running.countDown();
                    release.await();
                }
            };
            Subscription s = batch
                    ? bus.subscribeBatch(topic, "g", "c1", new BatchHandler() {
                        @Override
                        public void handle(Batch b) throws Exception {
                            for (Delivery d : b.deliveries()) {
                                b.starting(d);
                                blockFirst.handle(d);
                                b.succeed(d);
                            }
                        }

                        @Override
                        public boolean startsEachDelivery() {
                            return true;
                        }
                    }, options)
                    : bus.subscribe(topic, "g", "c1", blockFirst, options);
            try (s) {
                assertThat(running.await(30, TimeUnit.SECONDS)).as("the first handler started").isTrue();
                String starts = prefix + ":{" + topic + "}:starts:g";
                Wait.until("the first start recorded", Duration.ofSeconds(10), () -> target().redis().hlen(starts) > 0);
                assertThat(target().redis().xpending(prefix + ":{" + topic + "}:stream", "g").getCount())
                        .as("entries read, pending").isEqualTo(10);
                assertThat(target().redis().hlen(starts)).as("starts recorded while the first handler runs")
                        .isEqualTo(1);
                release.countDown();
                Wait.until("all ten handled", Duration.ofSeconds(30),
                        () -> target().redis().xpending(prefix + ":{" + topic + "}:stream", "g").getCount() == 0);
                assertThat(target().redis().exists(starts)).as("start record after every ack").isZero();
            }
        }
    }

    /** Issue's case (b): one runner, reads of ten. */
    @Test
    void onePoisonAmongForty_oneRunner_readsOfTen_onlyThePoisonIsDeadLettered() throws Exception {
        crashLoop(1, 10, 39, false, 1);
    }

    /** Issue's case (d): the defaults, eight runners and reads of a hundred. */
    @Test
    void onePoisonAmongTwoHundred_defaultConcurrencyAndBatch_onlyThePoisonIsDeadLettered() throws Exception {
        crashLoop(SubscribeOptions.DEFAULT_CONCURRENCY, SubscribeOptions.DEFAULT_BATCH_SIZE, 199, false, 1);
    }

    /** Ordered, four partitions run side by side: the heads of the others run beside the poison at every death. */
    @Test
    void ordered_onePoisonAmongManyKeys_onlyThePoisonIsDeadLettered() throws Exception {
        crashLoop(4, 10, 79, true, 4);
    }

    /**
     * Publishes the poison first and {@code good} good messages, then runs a consumer in a child JVM, started again
     * under the same name each time the poison kills it, until the poison is dead-lettered and every good message
     * handled.
     */
    private void crashLoop(int concurrency, int batchSize, int good, boolean ordered, int partitions)
            throws Exception {
        Set<String> goods = new HashSet<>();
        try (Bus bus = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix)
                .partitions(topic, partitions).build())) {
            List<Message> messages = new ArrayList<>();
            messages.add(Message.builder("job", "poison".getBytes(StandardCharsets.UTF_8)).key("k0").build());
            for (int i = 1; i <= good; i++) {
                goods.add("m" + i);
                messages.add(Message.builder("job", ("m" + i).getBytes(StandardCharsets.UTF_8)).key("k" + i % 16)
                        .build());
            }
            bus.publisher().publishAll(topic, messages);

            Supervisor.Run run = Supervisor.untilDone(() -> ChildJvm.start(PoisonConsumer.class, target().uri(),
                    prefix, topic, "g", "worker-1", Integer.toString(concurrency), Integer.toString(batchSize),
                    Integer.toString(MAX_DELIVERIES), "1000", Boolean.toString(ordered), Integer.toString(partitions)),
                    children::add, () -> settled(bus), MAX_DELIVERIES + 2, Duration.ofSeconds(90));
            int deaths = run.deaths();
            List<String> lines = run.lines();

            List<DeadLetter> dead = bus.deadLetters().list(topic, null, 100);
            assertThat(dead).as("dead letters").hasSize(1);
            assertThat(new String(dead.get(0).message().payload(), StandardCharsets.UTF_8)).isEqualTo("poison");
            assertThat(dead.get(0).reason()).startsWith("abandoned");
            long poisonStarts = run.count("STARTED poison");
            // maxDeliveries starts, then one alone; one more when the record of its first start, sent without
            // waiting, had not left the process when it halted
            assertThat(poisonStarts).as("starts of the poison").isBetween((long) MAX_DELIVERIES + 1,
                    (long) MAX_DELIVERIES + 2);
            assertThat(deaths).as("deaths").isEqualTo((int) poisonStarts);
            Set<String> handled = handled(lines);
            assertThat(handled).as("good messages handled").containsAll(goods);
            System.out.println("poison that kills its process (concurrency " + concurrency + ", batch " + batchSize
                    + (ordered ? ", ordered over " + partitions + " partitions" : "") + "): " + deaths + " deaths, "
                    + poisonStarts + " starts of the poison, " + lines.stream().filter(l -> l.startsWith("STARTED m"))
                    .count() + " starts of " + good + " good messages, 1 dead letter");
        }
    }

    /** The group exists, every message was delivered to it and none is pending: each was acked or dead-lettered. */
    private boolean settled(Bus bus) {
        List<Inspector.GroupInfo> groups = bus.inspector().groups(topic);
        return !groups.isEmpty() && groups.stream().allMatch(g -> g.pending() == 0 && g.lag() == 0);
    }

    private static Set<String> handled(List<String> lines) {
        Set<String> out = new HashSet<>();
        lines.stream().filter(l -> l.startsWith("HANDLED ")).forEach(l -> out.add(l.substring("HANDLED ".length())));
        return out;
    }
}
