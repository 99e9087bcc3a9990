package dev.runbus.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.BatchHandler;
import dev.runbus.BusListener;
import dev.runbus.Handler;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.internal.redis.Entry;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.Slots;
import dev.runbus.internal.redis.WireFormat;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The drain wakes the dispatcher's runners instead of waiting for their next look at the queue: what was queued
 * before it still runs, and nothing else does. About the dispatcher's own logic: no Redis behind it (the start
 * records and acks it sends fail, and are reported, as on a lost connection).
 */
class DispatcherDrainTest {

    final ExecutorService executor = Executors.newFixedThreadPool(8);
    final SafeListener listener = new SafeListener(BusListener.NONE);

    @AfterEach
    void tearDown() {
        executor.shutdownNow();
    }

    @Test
    void chunksQueuedBeforeTheDrainRunBeforeTheRunnersEnd() throws Exception {
        CountDownLatch firstRunning = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger handled = new AtomicInteger();
        Dispatcher dispatcher = dispatcher(1, d -> {
            if (d.streamId().equals("1-1")) {
                firstRunning.countDown();
                release.await();
            }
            handled.incrementAndGet();
        }, null);
        dispatcher.start(executor);
        Slots slots = new Slots(3);
        assertThat(slots.takeFree(3)).isEqualTo(3);
        dispatcher.accept(List.of(entry("1-1")), slots);
        assertThat(firstRunning.await(10, TimeUnit.SECONDS)).as("the first entry's handler started").isTrue();
        dispatcher.accept(List.of(entry("1-2"), entry("1-3")), slots); // queued: the one runner is busy

        CompletableFuture<Boolean> drained = CompletableFuture.supplyAsync(() -> {
            try {
                return dispatcher.drain(10_000);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        release.countDown();

        assertThat(drained.get(20, TimeUnit.SECONDS)).as("the drain ended within its timeout").isTrue();
        assertThat(handled).as("entries handled, the queued chunk included").hasValue(3);
        assertThat(slots.takeFree(3)).as("slots freed").isEqualTo(3);
    }

    @Test
    void aDrainOfAnIdleDispatcherRunsNothing() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Dispatcher single = dispatcher(3, d -> calls.incrementAndGet(), null);
        Dispatcher batch = dispatcher(2, null, call -> calls.incrementAndGet());
        single.start(executor);
        batch.start(executor);
        assertThat(single.drain(10_000)).isTrue();
        assertThat(batch.drain(10_000)).isTrue();
        assertThat(calls).as("handler calls, an empty batch included").hasValue(0);
    }

    private Dispatcher dispatcher(int concurrency, Handler handler, BatchHandler batchHandler) {
        SubscriptionContext ctx = new SubscriptionContext("g", "c1", Partitions.single("orders"), List.of("s"),
                SubscribeOptions.builder().concurrency(concurrency).build());
        return new Dispatcher(ctx, handler, batchHandler, new InFlight(), new Acker(null, null, ctx, 100, listener, true),
                null, null, listener, null, 100, new HandlerGate(), null);
    }

    private static Entry entry(String id) {
        return new Entry(0, id, WireFormat.encode(Message.of("t", new byte[0])), 1, "");
    }
}
