package dev.runbus.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.BusListener;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.internal.redis.Entry;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.Slots;
import dev.runbus.internal.redis.WireFormat;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a dispatcher does with entries handed over after its drain began: a read that outlived the read
 * loop's close can still return entries then. No Redis call is made on this path.
 */
class DispatcherAfterCloseTest {

    final ExecutorService executor = Executors.newFixedThreadPool(2);

    @AfterEach
    void tearDown() {
        executor.shutdownNow();
    }

    @Test
    void defect10_entriesArrivingAfterTheDrainStayPendingUnheldWithTheirSlotsFree() throws Exception {
        SubscriptionContext ctx = new SubscriptionContext("g", "c1", Partitions.single("orders"),
                java.util.List.of("s"), SubscribeOptions.builder().concurrency(2).build());
        InFlight inFlight = new InFlight();
        AtomicInteger calls = new AtomicInteger();
        SafeListener listener = new SafeListener(BusListener.NONE);
        // Neither the acker, the dead-letter mover nor the retrier is reached on this path: no connection behind them.
        Dispatcher dispatcher = new Dispatcher(ctx, d -> calls.incrementAndGet(), null, inFlight,
                new Acker(null, null, ctx, 100, listener, true), null, null, listener, null, 100, new HandlerGate(), null);
        dispatcher.start(executor);
        assertThat(dispatcher.drain(5_000)).isTrue();

        Slots slots = new Slots(4);
        assertThat(slots.takeFree(2)).isEqualTo(2);
        dispatcher.accept(List.of(entry("1-1"), entry("1-2")), slots);

        assertThat(inFlight.size()).isZero();
        assertThat(slots.takeFree(4)).isEqualTo(4);
        assertThat(calls).hasValue(0);
    }

    private static Entry entry(String id) {
        return new Entry(0, id, WireFormat.encode(Message.of("t", new byte[0])), 1, "");
    }
}
