package dev.runbus.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.BusListener;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.internal.redis.Entry;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.internal.redis.Slots;
import dev.runbus.internal.redis.WireFormat;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import dev.runbus.testing.OneStream;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.XClaimArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.models.stream.PendingMessage;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A handled entry stays held until its ack is answered (InFlight.settle): the ack can wait for the entry's start record
 * and for the XACK in flight before it, on a busy host past {@code minIdle}. Held, a claim of it by its own consumer's
 * reclaimer is not run again, and the keep-alive keeps its claim, so that no other consumer takes it over. On the
 * local Redis; the start record and the ack go through a proxy that holds them on the wire, and the acker waits for
 * the record as it does on a cluster.
 */
class HeldUntilAckedTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Duration KEEP_ALIVE = Duration.ofMillis(200);

    private final SafeListener listener = new SafeListener(BusListener.NONE);
    private final ExecutorService executor = Executors.newFixedThreadPool(1);
    private final AtomicInteger calls = new AtomicInteger();
    private final InFlight inFlight = new InFlight();
    private final Slots slots = new Slots(2);
    private OneStream one;
    private TcpProxy proxy;
    private RedisLink proxied;
    private SubscriptionContext ctx;
    private Acker acker;
    private Dispatcher dispatcher;

    @BeforeEach
    void start() {
        one = new OneStream("test-held-until-acked");
        proxy = TcpProxy.before(RedisTarget.local().uri());
        proxied = RedisLink.open(proxy.uri(), Duration.ofSeconds(5));
        Scripts scripts = one.scriptsOver(proxied);
        ctx = SubscriptionContext.of("g", "c1", one.partitions, one.keys, SubscribeOptions.builder().concurrency(1)
                .minIdle(Duration.ofSeconds(1)).keepAliveInterval(KEEP_ALIVE).build());
        acker = new Acker(scripts, proxied.async(), ctx, 5_000, listener, false);
        dispatcher = new Dispatcher(ctx, d -> calls.incrementAndGet(), null, inFlight, acker, null, null, listener,
                scripts, 5_000, new HandlerGate(), null);
        dispatcher.start(executor);
    }

    @AfterEach
    void stop() throws InterruptedException {
        proxy.resume();
        dispatcher.drain(5_000);
        acker.close();
        executor.shutdownNow();
        proxied.close();
        proxy.close();
        one.close();
    }

    @Test
    void aClaimByItsOwnConsumerIsNotRunAgainWhileTheAckWaits() throws InterruptedException {
        Entry read = handledWhileItsRecordAndAckWait();

        // The reclaimer of this consumer claims the entry, which went idle (a busy host: minIdle passed), and hands
        // it to the dispatcher: no start of it has landed, so it comes as a first delivery.
        one.redis.xclaim(one.stream, Consumer.from("g", "c1"), XClaimArgs.Builder.minIdleTime(0), read.streamId());
        dispatch(new Entry(0, read.streamId(), read.fields(), 1, "c1"));

        proxy.resume();
        Wait.until("acked", WAIT, () -> pending().isEmpty());
        assertThat(dispatcher.drain(10_000)).as("the dispatcher drained").isTrue();
        assertThat(calls).as("handler calls").hasValue(1);
        Wait.until("the hold let go once the ack was answered", WAIT,
                () -> inFlight.renewedBefore(System.nanoTime() + TimeUnit.MINUTES.toNanos(1)).isEmpty());
    }

    @Test
    void theKeepAliveKeepsTheClaimWhileTheAckWaits() {
        handledWhileItsRecordAndAckWait();
        KeepAlive keepAlive = new KeepAlive(ctx, one.scripts, inFlight, listener, 5_000, null); // not through the proxy

        long idle = idleUntilAtLeast(2 * KEEP_ALIVE.toMillis());
        Wait.until("the claim renewed", WAIT, () -> {
            keepAlive.run();
            return pendingIdleMillis() < idle;
        });

        proxy.resume();
        Wait.until("acked", WAIT, () -> pending().isEmpty());
        assertThat(calls).as("handler calls").hasValue(1);
    }

    /**
     * One entry read as new by c1 and handled, while the proxy holds its start record, and so its ack, on the wire.
     * Returns it once its handler ended and its outcome was applied.
     */
    private Entry handledWhileItsRecordAndAckWait() {
        one.redis.xadd(one.stream, "type", "x", "payload", "p");
        String id = one.redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.StreamOffset.lastConsumed(one.stream))
                .get(0).getId();
        Entry read = new Entry(0, id, WireFormat.encode(Message.of("x", new byte[0])), 1, "", true);
        proxy.pause();
        dispatch(read);
        Wait.until("handled and settled", WAIT, () -> calls.get() == 1 && inFlight.size() == 0);
        assertThat(pending()).as("pending: the ack waits for the record").hasSize(1);
        return read;
    }

    private void dispatch(Entry e) {
        assertThat(slots.takeFree(1)).isEqualTo(1);
        dispatcher.accept(List.of(e), slots);
    }

    private long idleUntilAtLeast(long millis) {
        Wait.until("idle for " + millis + " ms", WAIT, () -> pendingIdleMillis() >= millis);
        return pendingIdleMillis();
    }

    private long pendingIdleMillis() {
        return pending().get(0).getMsSinceLastDelivery();
    }

    private List<PendingMessage> pending() {
        return one.redis.xpending(one.stream, "g", Range.create("-", "+"), Limit.from(10));
    }
}
