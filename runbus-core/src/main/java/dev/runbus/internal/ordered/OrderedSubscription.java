package dev.runbus.internal.ordered;

import dev.runbus.Handler;
import dev.runbus.internal.consume.BusServices;
import dev.runbus.internal.consume.BusSubscription;
import dev.runbus.internal.consume.DeadLetterMover;
import dev.runbus.internal.consume.FlowTicker;
import dev.runbus.internal.consume.PeriodicLoop;
import dev.runbus.internal.consume.SubscriptionContext;
import dev.runbus.internal.redis.StreamReader;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A consumer of an ordered group: it owns some partitions of the topic through leases
 * ({@link PartitionOwnership}), reads their new entries ({@link OrderedReadLoop}) and runs each partition one
 * entry at a time, partitions in parallel up to {@code concurrency} ({@link OrderedRunners},
 * {@link PartitionStep}). There is no reclaimer and no keep-alive: a partition's entries are only ever
 * handled by its owner, and a new owner first claims what earlier owners left pending.
 *
 * <p>Shutdown order: stop reading and taking leases; let the steps running finish (up to shutdownTimeout),
 * still renewing the leases they run under; release the leases and leave the group, so that the others take
 * the partitions at their next tick; stop the threads it owns and its read connection, and remove its
 * heartbeat.
 */
public final class OrderedSubscription extends BusSubscription {

    private static final Logger log = LoggerFactory.getLogger(OrderedSubscription.class);

    private final StreamReader reader;
    private final PartitionOwnership ownership;
    private final PeriodicLoop ownershipLoop;
    private final OrderedRunners runners;
    private final OrderedReadLoop readLoop;
    private final DeadLetterMover deadLetters;
    private final ScheduledExecutorService timer;
    private final ExecutorService ownedExecutor;
    /** With a flow rate: lets in the keys its rate held back when they are due; else null. */
    private final FlowTicker flowTicker;

    public OrderedSubscription(SubscriptionContext ctx, Handler handler, BusServices bus, StreamReader reader, Runnable onClosed) {
        super(ctx, onClosed);
        this.reader = reader;
        SafeListener listener = bus.listener();
        OrderedScripts scripts = new OrderedScripts(bus.scriptCalls(), bus.sync(), bus.async(), bus.keys(), ctx.group(), ctx.consumer());
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "runbus-ordered-timer-" + ctx.describe()));
        this.deadLetters = new DeadLetterMover(ctx, bus.scripts(), listener, bus.commandTimeoutMillis(), bus.clock());
        // The three call each other; the callbacks run only after start, when every field is set.
        this.ownership = new PartitionOwnership(ctx, scripts, listener, this::offer, bus.commandTimeoutMillis());
        PartitionStep step = new PartitionStep(new PartitionStep.Parts(ctx, handler, scripts, deadLetters, ownership,
                listener, timer, bus.keys(), bus.groups(), bus.gate()), this::wake, this::offer);
        this.runners = new OrderedRunners(ctx.describe(), ctx.options().concurrency(), step::run, listener);
        this.readLoop = new OrderedReadLoop(ctx, reader, scripts, ownership, runners,
                bus.groups(), listener, bus.commandTimeoutMillis());
        this.ownershipLoop = new PeriodicLoop("runbus-leases-" + ctx.describe(),
                PartitionOwnership.tick(ctx.options().leaseTime()), ownership, listener);
        this.flowTicker = ctx.options().flowControlled() ? FlowTicker.ofOrdered(ctx, bus) : null;
        AtomicInteger n = new AtomicInteger();
        this.ownedExecutor = ctx.options().executor() == null ? Executors.newFixedThreadPool(
                ctx.options().concurrency(), r -> daemon(r, "runbus-handler-" + ctx.describe() + "-" + n.incrementAndGet()))
                : null;
    }

    private void offer(OwnedPartition p) {
        runners.offer(p);
    }

    private void wake(int partition) {
        readLoop.wake(partition);
    }

    @Override
    protected boolean readLoopAlive() {
        return readLoop.isAlive();
    }

    @Override
    public OrderedSubscription start() {
        runners.start(ownedExecutor != null ? ownedExecutor : ctx.options().executor());
        deadLetters.start();
        readLoop.start();
        ownershipLoop.start();
        if (flowTicker != null) {
            flowTicker.start();
        }
        return this;
    }

    /** Entries read and not yet finished, over the partitions owned now. */
    @Override
    public int inFlight() {
        return ownership.owned().stream().mapToInt(OwnedPartition::queued).sum();
    }

    /** Stops reading and taking partitions; the leases held are still renewed while the handlers finish. */
    @Override
    protected void stopWork() {
        if (flowTicker != null) {
            flowTicker.close(); // what waits for its rate is let in by the group's other consumers
        }
        ownership.closing();
        readLoop.close();
    }

    @Override
    protected void finishWork() {
        if (!drain(runners::stop)) {
            // Their partitions keep their leases until they expire; then the next owner runs their entries.
            log.warn("{}: handlers still running after {}; their partitions pass to another consumer when their "
                    + "leases expire, within {}, and their entries run there again", ctx.describe(),
                    ctx.options().shutdownTimeout(), ctx.options().leaseTime());
        }
        ownershipLoop.close();
        ownership.leave();
        timer.shutdownNow();
        deadLetters.close();
        if (ownedExecutor != null) {
            ownedExecutor.shutdownNow();
        }
        reader.close();
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
