package dev.runbus.internal.consume;

import dev.runbus.internal.flow.FlowCaps;
import dev.runbus.internal.telemetry.SafeListener;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A subscription's ticks of its flow-controlled partitions (docs/flow-control.md, "Rate limits"): each tick lets in
 * the keys whose rate held them back and that are due. One consumer per partition, the ticker, holds the role on a
 * lease renewed by its calls; the replies of its releases and ticks tell it when the next key is due, and it ticks
 * then. Every consumer also ticks each partition at its own pace, so that a key held back while none of its entries
 * ran (no release told the ticker), or a dead ticker's keys, wait at most that long past their due time.
 */
public final class FlowTicker {

    /** At most this many keys held back by their rate are admitted per partition and tick. */
    static final int KEYS_PER_TICK = 100;
    /**
     * With a rate, every consumer ticks each partition at least this often (or every {@code claimInterval}, when
     * shorter).
     */
    static final Duration TICK_AT_LEAST_EVERY = Duration.ofSeconds(1);

    /** One partition's ticks: one on the wire at a time, the last round, and when its next key is due. */
    private static final class Tick {
        final AtomicBoolean busy = new AtomicBoolean();
        volatile long lastRound = System.nanoTime();
        volatile boolean due;
        volatile long dueAt;
    }

    private final SubscriptionContext ctx;
    private final FlowCaps[] caps;
    private final SafeListener listener;
    private final long timeoutMillis;
    private final Tick[] ticks;
    /** The ticker's role outlives a few of its own rounds: another consumer takes it only from a dead one. */
    private final Duration lease;
    /** How often each partition is ticked at the least. */
    private final Duration round;
    private final PeriodicLoop loop;

    FlowTicker(SubscriptionContext ctx, FlowCaps[] caps, SafeListener listener, long timeoutMillis) {
        this.ctx = ctx;
        this.caps = caps;
        this.listener = listener;
        this.timeoutMillis = timeoutMillis;
        this.ticks = new Tick[caps.length];
        for (int p = 0; p < caps.length; p++) {
            ticks[p] = new Tick();
        }
        Duration claimInterval = ctx.options().claimInterval();
        this.lease = claimInterval.multipliedBy(3);
        // Every flow-controlled subscription ticks: a key may have a rate of its own (Bus.setFlowRate) where the
        // subscription has none. Without a rate of its own (for its keys or its topic), it ticks at the reclaimer's
        // pace, and its ticker as its releases and ticks tell it.
        boolean rated = ctx.options().flowRate() != null || ctx.options().flowTopicRate() != null;
        this.round = !rated || claimInterval.compareTo(TICK_AT_LEAST_EVERY) <= 0 ? claimInterval : TICK_AT_LEAST_EVERY;
        this.loop = new PeriodicLoop("runbus-flow-tick-" + ctx.describe(), round, this::tick, listener);
    }

    /**
     * The ticks of an ordered subscription with a flow rate (docs/flow-control.md, "Ordered topics"), whose entries
     * are let in by their rates alone: nothing releases a slot there, so its ticks are all that lets a key in when its
     * rate allows.
     */
    public static FlowTicker ofOrdered(SubscriptionContext ctx, BusServices bus) {
        FlowCaps[] caps = new FlowCaps[ctx.partitions().count()];
        for (int p = 0; p < caps.length; p++) {
            caps[p] = new FlowCaps(bus.scriptCalls(), bus.sync(), bus.async(), bus.keys(), ctx.name(p));
        }
        return new FlowTicker(ctx, caps, bus.listener(), bus.commandTimeoutMillis());
    }

    /** The ticker role's lease, for the calls that may take it. */
    Duration lease() {
        return lease;
    }

    public void start() {
        loop.start();
    }

    /** Stops the ticks; a tick on the wire is let be (what it admits is read by whoever reads next). */
    public void close() {
        loop.close();
    }

    /**
     * One step: on each partition whose key held back by its rate is due, or whose last tick is a round old, admits
     * the keys that are due, without waiting. The reply tells this consumer when to tick again if it is the
     * partition's ticker.
     */
    private void tick() {
        long now = System.nanoTime();
        long roundNanos = round.toNanos();
        for (int p = 0; p < caps.length; p++) {
            Tick t = ticks[p];
            boolean due = t.due && now - t.dueAt >= 0;
            if (!(due || now - t.lastRound >= roundNanos) || !t.busy.compareAndSet(false, true)) {
                if (t.due && !due) {
                    loop.runAt(t.dueAt); // moved later since this wake was asked for: asked for again
                }
                continue; // not yet; or the last one is not answered yet: its master may stall, the others go on
            }
            t.lastRound = now;
            t.due = false;
            int partition = p;
            CompletableFuture<FlowCaps.Admitted> reply;
            try {
                reply = caps[p].tickAsync(ctx.consumer(), lease, KEYS_PER_TICK);
            } catch (RuntimeException e) {
                reply = CompletableFuture.failedFuture(e);
            }
            reply.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS).whenComplete((a, failure) -> {
                t.busy.set(false);
                if (failure != null) {
                    listener.onLoopError("flow control of " + ctx.describe(), failure);
                } else {
                    schedule(partition, a.nextTickMillis());
                }
            });
        }
    }

    /** For the partition's ticker: the next tick in {@code millis} (none when negative). */
    void schedule(int partition, long millis) {
        if (millis < 0) {
            return;
        }
        Tick t = ticks[partition];
        t.dueAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        t.due = true;
        loop.runAt(t.dueAt);
    }
}
