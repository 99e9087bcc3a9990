package dev.runbus.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.BusListener;
import dev.runbus.SubscribeOptions;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.internal.telemetry.BusMeters;
import dev.runbus.internal.telemetry.SafeListener;
import dev.runbus.testing.OneStream;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.Range;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.models.stream.PendingMessage;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An entry's ack never reaches Redis before its start record (Acker): a record that ran after the ack would leave a
 * field for an entry no longer pending. Where commands may reach Redis out of the order of the calls (a cluster), an
 * ack waits until its record is answered; on one connection it may leave at once from its own thread when no XACK of
 * its lane is in flight, and otherwise waits for its record too. On the local Redis; the records' replies are futures
 * the test completes itself, standing for record calls still on the wire.
 */
class AckAfterStartRecordTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    /** The acks here are of entries nobody holds: nothing to tell when they are answered. */
    private static final Runnable NOBODY = () -> { };

    private OneStream one;

    private final List<Integer> ackedPerReply = new CopyOnWriteArrayList<>();
    private Acker acker;
    private SafeListener listener;
    private SubscriptionContext ctx;

    @BeforeEach
    void connect() {
        one = new OneStream("test-ack-after-record");
        listener = new SafeListener(BusListener.NONE);
        listener.measureWith(new BusMeters() {
            @Override
            public void acked(String topic, String group, int entries) {
                ackedPerReply.add(entries);
            }
        });
        ctx = SubscriptionContext.of("g", "c1", one.partitions, one.keys, SubscribeOptions.defaults());
        acker = new Acker(one.scripts, one.link.async(), ctx, 5_000, listener, false);
    }

    @AfterEach
    void tearDown() {
        acker.close();
        one.close();
    }

    @Test
    void acksWaitForTheirRecordAndThenLeaveTogether() {
        List<String> ids = read(4);
        CompletableFuture<Long> record = new CompletableFuture<>();
        ids.subList(0, 3).forEach(id -> acker.ack(0, id, record, true, NOBODY));
        // An entry whose record is answered is acked at once, on the same lane: once it is gone, the lane has sent
        // what it could, and the other three are still pending.
        acker.ack(0, ids.get(3), CompletableFuture.completedFuture(1L), true, NOBODY);
        Wait.until("the entry whose record was answered acked", WAIT, () -> !pendingIds().contains(ids.get(3)));
        assertThat(pendingIds()).as("entries whose record is not answered yet").containsExactlyElementsOf(
                ids.subList(0, 3));

        record.complete(3L);
        Wait.until("the three acked once their record was answered", WAIT, () -> pendingIds().isEmpty());
        Wait.until("the replies counted", WAIT, () -> ackedSum() == 4); // counted after the reply, on its thread
        assertThat(ackedPerReply).as("entries per XACK: the first alone, then the three in one").containsExactly(1, 3);
    }

    @Test
    void aFailedRecordStillLetsTheAckGo() {
        // A record that failed did not run, or ran before its reply was lost: either way it runs no more.
        List<String> ids = read(2);
        CompletableFuture<Long> record = new CompletableFuture<>();
        ids.forEach(id -> acker.ack(0, id, record, true, NOBODY));
        record.completeExceptionally(new IllegalStateException("connection lost"));
        Wait.until("both acked", WAIT, () -> pendingIds().isEmpty());
        Wait.until("the reply counted", WAIT, () -> ackedSum() == 2);
        assertThat(ackedPerReply).containsExactly(2);
    }

    @Test
    void closeWaitsForAcksWhoseRecordIsAnsweredMeanwhile() throws InterruptedException {
        List<String> ids = read(2);
        CompletableFuture<Long> record = new CompletableFuture<>();
        ids.forEach(id -> acker.ack(0, id, record, true, NOBODY));
        Thread closing = new Thread(acker::close, "closing the acker");
        closing.start();
        // close waits (parked between its looks) while acks wait for their record; answered, they leave before it
        // returns. An acker that did not count them as work would have closed already, and dropped them.
        Wait.until("close waiting for the acks", WAIT, () -> closing.getState() == Thread.State.TIMED_WAITING);
        record.complete(2L);
        closing.join(WAIT.toMillis());
        assertThat(closing.isAlive()).as("close still running").isFalse();
        assertThat(pendingIds()).as("pending after close").isEmpty();
    }

    @Test
    void onOneConnectionAnAckLeavesBehindItsRecordWithoutWaitingWhenNoXackIsInFlight() {
        acker.close();
        acker = new Acker(one.scripts, one.link.async(), ctx, 5_000, listener, true);
        List<String> ids = read(1);
        CompletableFuture<Long> record = new CompletableFuture<>(); // never answered here
        acker.ack(0, ids.get(0), record, true, NOBODY);
        Wait.until("acked before its record was answered", WAIT, () -> pendingIds().isEmpty());
        assertThat(record).isNotDone();
    }

    @Test
    void onOneConnectionAnAckWaitsForItsRecordWhenAnXackOfItsLaneIsInFlight() {
        // The XACK in flight would be answered, and the next one sent, from the client's I/O thread, which writes
        // ahead of a record queued by a handler's thread: the ack must wait for its record instead. A proxy holds
        // the first XACK on the wire so that the second ack finds it in flight.
        acker.close();
        List<String> ids = read(2);
        try (TcpProxy proxy = TcpProxy.before(RedisTarget.local().uri());
             RedisLink link = RedisLink.open(proxy.uri(), Duration.ofSeconds(5))) {
            acker = new Acker(one.scriptsOver(link), link.async(), ctx, 5_000, listener, true);
            proxy.pause();
            acker.ack(0, ids.get(0), CompletableFuture.completedFuture(1L), true, NOBODY);
            CompletableFuture<Long> record = new CompletableFuture<>();
            acker.ack(0, ids.get(1), record, true, NOBODY);
            proxy.resume();
            Wait.until("the first XACK answered", WAIT, () -> ackedSum() == 1);
            assertThat(pendingIds()).as("the entry whose record is not answered yet").containsExactly(ids.get(1));

            record.complete(1L);
            Wait.until("acked once its record was answered", WAIT, () -> pendingIds().isEmpty());
            Wait.until("the reply counted", WAIT, () -> ackedSum() == 2);
            assertThat(ackedPerReply).as("entries per XACK").containsExactly(1, 1);
            acker.close();
        }
    }

    /** Adds {@code n} entries and reads them as consumer c1, so that they are pending. */
    private List<String> read(int n) {
        IntStream.range(0, n).forEach(i -> one.redis.xadd(one.stream, "type", "x", "payload", "p" + i));
        return one.redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.StreamOffset.lastConsumed(one.stream)).stream()
                .map(m -> m.getId()).toList();
    }

    private int ackedSum() {
        return ackedPerReply.stream().mapToInt(Integer::intValue).sum();
    }

    private List<String> pendingIds() {
        return one.redis.xpending(one.stream, "g", Range.create("-", "+"), io.lettuce.core.Limit.from(100)).stream()
                .map(PendingMessage::getId).toList();
    }
}
