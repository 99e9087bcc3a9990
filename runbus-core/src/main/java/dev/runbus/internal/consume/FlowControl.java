package dev.runbus.internal.consume;

import dev.runbus.FlowFairness;
import dev.runbus.SubscribeOptions;
import dev.runbus.internal.flow.FlowCaps;
import dev.runbus.internal.redis.WireFormat;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A subscription's side of per-key concurrency caps (docs/flow-control.md): each event of an entry with a flow key
 * reaches its partition's {@link FlowCaps}. A hold is a lease on a slot of the entry's key; the bus only ever asks
 * Redis about it, so nothing here counts slots.
 * <ul>
 *   <li>at subscribe, {@link #configure} records the group and the cap on every partition and admits what waits;</li>
 *   <li>before entries are handed to the runners, {@link #confirm} renews their holds, or takes one where the key has
 *   room (one call per partition, not awaited: each partition's entries go to the runners when its call is answered); an entry without room is parked again by the script (acked and deleted from the stream, back in its place,
 *   with the starts it had added to its attempts) and does not run: waiting is not a delivery;</li>
 *   <li>when an entry's outcome is answered (ack, dead letter, reschedule), {@link #release} gives its slot back, which
 *   admits the key's next entry; releases of a partition are batched, one call on the wire at a time;</li>
 *   <li>the keep-alive {@link #renew renews} the holds of the entries it keeps alive;</li>
 *   <li>every reclaim round {@link #reap reaps} expired holds (a dead consumer's), admitting in their place;</li>
 *   <li>its {@link FlowTicker} lets in the keys whose rate held them back, when they are due.</li>
 * </ul>
 * A release lost with its call costs the slot until its hold expires and is reaped; it never admits too many, since a
 * handler starts only on a confirmed hold.
 */
public final class FlowControl {

    private static final Logger log = LoggerFactory.getLogger(FlowControl.class);

    /** At most this many expired holds are reaped per partition and round. */
    static final int REAP_PER_CALL = 100;
    /** At most this many holds are released per call. */
    static final int RELEASES_PER_CALL = 200;
    /** The cap of a subscription that sets a rate and no cap: none. */
    static final int NO_CAP = Integer.MAX_VALUE;

    private final SubscriptionContext ctx;
    private final SafeListener listener;
    private final long timeoutMillis;
    private final FlowCaps[] caps;
    private final Lane[] lanes;
    private final AtomicBoolean[] reaping;
    /** Lets in the keys whose rate held them back, when they are due. */
    private final FlowTicker ticker;
    /** Whether fair shares count handler time: a release then carries each handler's time. */
    private final boolean byHandlerTime;

    /** One partition's releases: queued, sent one call at a time. */
    private static final class Lane {
        final Queue<FlowCaps.Hold> queue = new ConcurrentLinkedQueue<>();
        final AtomicBoolean sending = new AtomicBoolean();
    }

    private FlowControl(SubscriptionContext ctx, BusServices bus) {
        this.ctx = ctx;
        this.listener = bus.listener();
        this.timeoutMillis = bus.commandTimeoutMillis();
        int n = ctx.partitions().count();
        this.caps = new FlowCaps[n];
        this.lanes = new Lane[n];
        this.reaping = new AtomicBoolean[n];
        for (int p = 0; p < n; p++) {
            caps[p] = new FlowCaps(bus.scriptCalls(), bus.sync(), bus.async(), bus.keys(), ctx.name(p));
            lanes[p] = new Lane();
            reaping[p] = new AtomicBoolean();
        }
        this.ticker = new FlowTicker(ctx, caps, listener, timeoutMillis);
        this.byHandlerTime = ctx.options().flowFairness() == FlowFairness.BY_HANDLER_TIME;
    }

    /** Starts the ticks. */
    void start() {
        ticker.start();
    }

    /** Stops the ticks; a tick on the wire is let be (what it admits is read by whoever reads next). */
    void close() {
        ticker.close();
    }

    /** The flow control of a subscription with a flow cap or rate; null for one without. */
    static FlowControl of(SubscriptionContext ctx, BusServices bus) {
        return ctx.options().flowControlled() ? new FlowControl(ctx, bus) : null;
    }

    /**
     * At subscribe, before the group is created (so that a group refused here is not left on the streams): records
     * the group and its cap on every partition, with {@code minIdle} as the hold's lease, and admits what waits.
     *
     * @throws IllegalStateException when another group that still exists set a flow cap on the topic (one group per
     *                               topic: its acks release the slots)
     */
    public static void configure(SubscriptionContext ctx, BusServices bus) {
        int topicCap = ctx.options().flowTopicCap();
        String topicLimit = topicCap != SubscribeOptions.FLOW_CONTROL_OFF ? "flowTopicCap"
                : ctx.options().flowTopicRate() != null ? "flowTopicRate" : null;
        if (topicLimit != null && ctx.partitions().count() > 1) {
            // Each partition's slots live in its own hash slot: a cap counted per partition would be a cap per
            // shard, not the topic's.
            throw new IllegalArgumentException(topicLimit + " needs an unpartitioned topic: " + ctx.describe()
                    + " has " + ctx.partitions().count() + " partitions, whose slots live apart (docs/flow-control.md)");
        }
        int admitted = 0;
        for (int p = 0; p < ctx.partitions().count(); p++) {
            admitted += new FlowCaps(bus.scriptCalls(), bus.sync(), null, bus.keys(), ctx.name(p))
                    .configure(ctx.group(), capOf(ctx.options()), ctx.options().minIdle(), ctx.options().flowRate(),
                            topicCap, ctx.options().flowPriorityAging(), ctx.options().flowTopicRate(),
                            ctx.options().flowFairness() == FlowFairness.BY_HANDLER_TIME, ctx.options().ordered())
                    .size();
        }
        log.debug("{}: flow cap {} and rate {} per key; {} waiting entries admitted", ctx.describe(),
                ctx.options().flowCap(), ctx.options().flowRate(), admitted);
    }

    /** The default cap per key: the subscription's, or none when it sets a rate only. */
    private static int capOf(SubscribeOptions o) {
        return o.flowCap() == SubscribeOptions.FLOW_CONTROL_OFF ? NO_CAP : o.flowCap();
    }

    /**
     * Confirms the holds of the entries with a flow key among {@code ready}, right before they go to the runners,
     * without waiting: returns those that may run now (the entries without a flow key), and hands each partition's
     * confirmed entries to {@code run} when its call is answered, so that a stalled master holds up the entries of
     * its own partitions only, not the rest of the read (rule 14). The others were parked again: their slots are
     * freed and their holds here let go, with no outcome (the script acked them). If a call fails or is not answered
     * within the command timeout, its entries stay pending, unheld here, for a takeover, and the failure is reported.
     */
    List<HeldDelivery> confirm(List<HeldDelivery> ready, InFlight inFlight, Consumer<List<HeldDelivery>> run) {
        Map<Integer, List<HeldDelivery>> flowing = new TreeMap<>();
        List<HeldDelivery> now = new ArrayList<>(ready.size());
        for (HeldDelivery h : ready) {
            if (h.hold().flowKey() == null) {
                now.add(h);
            } else {
                flowing.computeIfAbsent(h.hold().partition(), p -> new ArrayList<>()).add(h);
            }
        }
        flowing.forEach((p, held) -> {
            CompletableFuture<FlowCaps.Confirmed> reply;
            try {
                reply = caps[p].confirmAsync(ctx.group(), claimsOf(held));
            } catch (RuntimeException e) {
                reply = CompletableFuture.failedFuture(e);
            }
            reply.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS).whenComplete((c, failure) -> {
                if (failure != null) {
                    listener.onLoopError("flow control of " + ctx.describe() + ": confirming the holds of "
                            + held.size() + " entries of " + ctx.name(p), failure);
                    held.forEach(h -> letGo(h, inFlight));
                    return;
                }
                run.accept(confirmed(p, held, c, inFlight));
            });
        });
        return now;
    }

    /** The entries of partition {@code p} whose holds {@code c} confirmed; the others are let go here. */
    private List<HeldDelivery> confirmed(int p, List<HeldDelivery> held, FlowCaps.Confirmed c, InFlight inFlight) {
        Set<String> confirmed = new HashSet<>(c.confirmed());
        List<HeldDelivery> run = new ArrayList<>(held.size());
        int parkedAgain = 0;
        for (HeldDelivery h : held) {
            if (confirmed.contains(h.hold().streamId())) {
                run.add(h);
                recordAdmitWait(h);
            } else {
                letGo(h, inFlight);
                parkedAgain++;
            }
        }
        if (parkedAgain > 0) {
            log.debug("{}: {} entries of {} found their key at its cap and wait again", ctx.describe(), parkedAgain,
                    ctx.name(p));
            listener.meters().flowHolds(ctx.topic(), ctx.group(), "parked_again", parkedAgain);
        }
        return run;
    }

    /**
     * Times how long a message waited for its slot, from its park to its entry into the stream, both on the Redis
     * clock (the parked id's time and the stream id's): once, at its entry's first delivery.
     */
    private void recordAdmitWait(HeldDelivery h) {
        long parkedAt = h.hold().flowParkedMillis();
        if (parkedAt < 0 || h.delivery().deliveryCount() != 1) {
            return;
        }
        long admittedAt = WireFormat.millisOf(h.hold().streamId());
        listener.meters().flowAdmitWait(ctx.topic(), ctx.group(), Math.max(0, admittedAt - parkedAt));
    }

    private static void letGo(HeldDelivery h, InFlight inFlight) {
        inFlight.release(h.hold());
        h.slots().release(1);
    }

    /**
     * Gives the slot of {@code hold}'s entry back, if it has a flow key; without waiting. The hold has no flow key from
     * then on: its slot is not renewed (nor reported lost) while its ack is on its way, nor given back twice.
     */
    void release(InFlight.Hold hold) {
        String flowKey = hold.flowKey();
        hold.flowKey(null);
        if (flowKey != null) {
            release(hold.partition(), new FlowCaps.Hold(flowKey, hold.streamId(), hold.handlerMillis(),
                    hold.flowChargeMillis()));
        }
    }

    /** Gives the slot of entry {@code streamId} of {@code partition} back, if it has a flow key; without waiting. */
    void release(int partition, String flowKey, String streamId) {
        if (flowKey != null) {
            release(partition, new FlowCaps.Hold(flowKey, streamId));
        }
    }

    private void release(int partition, FlowCaps.Hold hold) {
        Lane lane = lanes[partition];
        lane.queue.add(hold);
        sendReleases(partition, lane);
    }

    private void sendReleases(int partition, Lane lane) {
        while (!lane.queue.isEmpty() && lane.sending.compareAndSet(false, true)) {
            List<FlowCaps.Hold> batch = new ArrayList<>();
            for (FlowCaps.Hold h = lane.queue.poll(); h != null; h = batch.size() < RELEASES_PER_CALL
                    ? lane.queue.poll() : null) {
                batch.add(h);
            }
            if (batch.isEmpty()) {
                lane.sending.set(false);
                continue;
            }
            CompletableFuture<FlowCaps.Admitted> reply;
            try {
                reply = byHandlerTime ? caps[partition].releaseTimedAsync(ctx.consumer(), ticker.lease(), batch)
                        : caps[partition].releaseAsync(ctx.consumer(), ticker.lease(), batch);
            } catch (RuntimeException e) {
                reply = CompletableFuture.failedFuture(e);
            }
            reply.whenComplete((admitted, failure) -> {
                if (failure != null) {
                    // The slots come back when the holds expire and are reaped.
                    listener.onLoopError("flow control of " + ctx.describe(), failure);
                } else {
                    ticker.schedule(partition, admitted.nextTickMillis());
                }
                lane.sending.set(false);
                sendReleases(partition, lane);
            });
            return;
        }
    }

    /**
     * Of the entries whose hold a renewal found gone, those still running here: a hold released after the renewal
     * read its flow key (its handler ended and its slot went with its ack) was not lost.
     */
    private static List<String> stillRunning(List<InFlight.Hold> renewed, List<String> lost) {
        List<String> out = new ArrayList<>();
        for (InFlight.Hold h : renewed) {
            if (h.flowKey() != null && lost.contains(h.streamId())) {
                out.add(h.streamId());
            }
        }
        return out;
    }

    /** Renews the holds of the entries the keep-alive just renewed, those with a flow key; without waiting. */
    void renew(int partition, List<InFlight.Hold> renewed) {
        List<FlowCaps.Hold> holds = new ArrayList<>();
        for (InFlight.Hold h : renewed) {
            if (h.flowKey() != null) {
                holds.add(new FlowCaps.Hold(h.flowKey(), h.streamId()));
            }
        }
        if (holds.isEmpty()) {
            return;
        }
        try {
            caps[partition].renewAsync(holds).whenComplete((gone, failure) -> {
                if (failure != null) {
                    listener.onLoopError("flow control of " + ctx.describe(), failure);
                    return;
                }
                List<String> lost = stillRunning(renewed, gone);
                if (!lost.isEmpty()) {
                    // Reaped while this consumer still ran them: it was paused past the lease (docs/flow-control.md).
                    log.warn("{}: {} running entries of {} lost their flow slot (the process was paused longer than "
                            + "minIdle); others of their keys may have started: {}", ctx.describe(), lost.size(),
                            ctx.name(partition), lost);
                    listener.meters().flowHolds(ctx.topic(), ctx.group(), "lost", lost.size());
                }
            });
        } catch (RuntimeException e) {
            listener.onLoopError("flow control of " + ctx.describe(), e);
        }
    }

    /**
     * Removes expired holds on every partition that has no reap on the wire, admitting in their place; without
     * waiting. A dead consumer's slots come back this way.
     */
    void reap() {
        for (int p = 0; p < caps.length; p++) {
            AtomicBoolean busy = reaping[p];
            if (!busy.compareAndSet(false, true)) {
                continue; // the last one is not answered yet: its master may stall; the others go on
            }
            int partition = p;
            CompletableFuture<FlowCaps.Reaped> reply;
            try {
                reply = caps[p].reapAsync(REAP_PER_CALL);
            } catch (RuntimeException e) {
                reply = CompletableFuture.failedFuture(e);
            }
            reply.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS).whenComplete((r, failure) -> {
                busy.set(false);
                if (failure != null) {
                    listener.onLoopError("flow control of " + ctx.describe(), failure);
                } else if (r.holds() > 0) {
                    log.debug("{}: {} expired flow holds of {} reaped, {} entries admitted", ctx.describe(), r.holds(),
                            ctx.name(partition), r.admitted().size());
                    listener.meters().flowHolds(ctx.topic(), ctx.group(), "expired", (int) r.holds());
                }
            });
        }
    }

    /** The entries' holds and the starts recorded on them before this delivery (its count less this one). */
    private static List<FlowCaps.Claim> claimsOf(List<HeldDelivery> held) {
        List<FlowCaps.Claim> claims = new ArrayList<>(held.size());
        held.forEach(h -> claims.add(new FlowCaps.Claim(h.hold().flowKey(), h.hold().streamId(),
                h.delivery().deliveryCount() - 1)));
        return claims;
    }
}
