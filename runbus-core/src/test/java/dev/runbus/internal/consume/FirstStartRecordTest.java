package dev.runbus.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.BusListener;
import dev.runbus.Delivery;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.internal.redis.Entry;
import dev.runbus.internal.redis.Slots;
import dev.runbus.internal.telemetry.SafeListener;
import dev.runbus.testing.OneStream;
import io.lettuce.core.Consumer;
import io.lettuce.core.XReadArgs;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Which entries get their first start with a plain HSET and which through record_starts.lua (StartRecorder): the
 * HSET does not look at the pending list, so it is kept for entries read as new, still held, and read recently
 * enough that their record lands before another consumer can claim them. On the local Redis, each case with an entry
 * that is no longer pending (acked by another consumer, or trimmed): the script skips it, the HSET would write a field
 * nobody removes. Which of the two ran shows in the start record.
 */
class FirstStartRecordTest {

    private OneStream one;
    private final SafeListener listener = new SafeListener(BusListener.NONE);

    @BeforeEach
    void connect() {
        one = new OneStream("test-first-start");
    }

    @AfterEach
    void tearDown() {
        one.close();
    }

    @Test
    void anEntryReadAsNewAndStillHeldIsWrittenWithoutALook() throws Exception {
        // The contrast to the two cases below: acked by another consumer meanwhile, the entry still gets its field,
        // so the HSET ran. (This consumer's own ack is sent behind it; see AckAfterStartRecordTest.)
        InFlight inFlight = new InFlight();
        HeldDelivery h = readAsNewThenAckedElsewhere(inFlight);

        record(recorder(inFlight, Duration.ofSeconds(30), 1_000), h);

        assertThat(one.redis.hget(one.starts(), h.hold().streamId()))
                .isEqualTo(String.valueOf(1 + (1L << 32)));
    }

    @Test
    void anEntryNoLongerHeldGoesThroughTheScript() throws Exception {
        // Found trimmed by the reclaimer or the keep-alive, which ack it and let go of its hold, before its record.
        InFlight inFlight = new InFlight();
        HeldDelivery h = readAsNewThenAckedElsewhere(inFlight);
        inFlight.releaseTrimmed(0, List.of(h.hold().streamId()));

        record(recorder(inFlight, Duration.ofSeconds(30), 1_000), h);

        assertThat(one.redis.exists(one.starts())).as("start record").isZero();
    }

    @Test
    void anEntryWhoseReadWasSentLongAgoGoesThroughTheScript() throws Exception {
        // A process paused between the read's reply and the hand-over: the hold counts from the read's sending, so
        // an entry that may have been idle in Redis for half of minIdle is no longer written without a look.
        InFlight inFlight = new InFlight();
        HeldDelivery h = readAsNewThenAckedElsewhere(inFlight, System.nanoTime() - Duration.ofSeconds(20).toNanos());

        record(recorder(inFlight, Duration.ofSeconds(30), 1_000), h);

        assertThat(one.redis.exists(one.starts())).as("start record").isZero();
    }

    @Test
    void aCommandTimeoutOfHalfOfMinIdleOrMoreSendsEveryStartThroughTheScript() throws Exception {
        // A record may land up to the command timeout after it was sent; with minIdle 200 ms and a timeout of 100 ms,
        // another consumer could claim the entry first, so no entry is written without a look.
        InFlight inFlight = new InFlight();
        HeldDelivery h = readAsNewThenAckedElsewhere(inFlight);

        record(recorder(inFlight, Duration.ofMillis(200), 100), h);

        assertThat(one.redis.exists(one.starts())).as("start record").isZero();
    }

    private StartRecorder recorder(InFlight inFlight, Duration minIdle, long commandTimeoutMillis) {
        SubscriptionContext ctx = SubscriptionContext.of("g", "c1", one.partitions, one.keys,
                SubscribeOptions.builder().minIdle(minIdle).build());
        return new StartRecorder(ctx, one.scripts, inFlight, listener, commandTimeoutMillis);
    }

    /** Records the start and waits for the record's reply. */
    private static void record(StartRecorder recorder, HeldDelivery h) throws Exception {
        recorder.record(List.of(h));
        h.hold().startRecorded().get(5, TimeUnit.SECONDS);
    }

    /**
     * One entry added and read as new by consumer c1, held as the read loop holds it, then acked by another consumer,
     * so that a record written without a look leaves a field and one through the script none.
     */
    private HeldDelivery readAsNewThenAckedElsewhere(InFlight inFlight) {
        return readAsNewThenAckedElsewhere(inFlight, System.nanoTime());
    }

    /** The same for a read sent at {@code sentAt} (System.nanoTime). */
    private HeldDelivery readAsNewThenAckedElsewhere(InFlight inFlight, long sentAt) {
        one.redis.xadd(one.stream, "type", "x", "payload", "p");
        String id = one.redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.StreamOffset.lastConsumed(one.stream))
                .get(0).getId();
        InFlight.Hold hold = inFlight.tryHold(new Entry.Ref(0, id), true, sentAt);
        Delivery d = new Delivery(Message.of("x", new byte[0]), "t", id, "g", "c1", 1);
        one.redis.xack(one.stream, "g", id);
        return new HeldDelivery(d, hold, new Slots(1), true);
    }
}
