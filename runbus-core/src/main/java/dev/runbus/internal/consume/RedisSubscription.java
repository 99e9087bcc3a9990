package dev.runbus.internal.consume;

import dev.runbus.BatchHandler;
import dev.runbus.Handler;
import dev.runbus.SubscribeOptions;
import dev.runbus.internal.redis.Slots;
import dev.runbus.internal.redis.StreamReader;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One consumer and its loops: read loop, reclaimer, keep-alive, dispatcher and acker. The start and
 * shutdown orders are written here and nowhere else.
 */
public final class RedisSubscription extends BusSubscription {

    private static final Logger log = LoggerFactory.getLogger(RedisSubscription.class);

    private final StreamReader reader;
    private final Slots readSlots;
    private final InFlight inFlight = new InFlight();
    private final Acker acker;
    private final Dispatcher dispatcher;
    private final DeadLetterMover deadLetters;
    private final ReadLoop readLoop;
    private final Reclaimer reclaimer;
    private final PeriodicLoop reclaimLoop;
    private final PeriodicLoop keepAliveLoop;
    private final ExecutorService ownedExecutor;
    private final Scripts scripts;
    /** Flow control of a subscription with a flow cap or rate; else null. */
    private final FlowControl flow;

    /**
     * Exactly one of {@code handler} and {@code batchHandler} is set; {@code groupsCreated} are the partitions whose
     * group the subscribe found or created (the read loop creates the others').
     */
    public RedisSubscription(SubscriptionContext ctx, Handler handler, BatchHandler batchHandler, BusServices bus,
                      StreamReader reader, Set<Integer> groupsCreated, Runnable onClosed) {
        super(ctx, onClosed);
        this.reader = reader;
        this.scripts = bus.scripts();
        SubscribeOptions o = ctx.options();
        SafeListener listener = bus.listener();
        // Room for the handlers, the batch waiting for them and the next batch being read (so reads stay full
        // size); the reclaimer has a batch of its own.
        this.readSlots = new Slots(o.concurrency() + 2 * o.batchSize());
        Slots reclaimSlots = new Slots(o.batchSize());
        this.flow = FlowControl.of(ctx, bus);
        this.acker = new Acker(bus.scripts(), bus.async(), ctx, bus.commandTimeoutMillis(), listener,
                bus.writesInCallOrder());
        this.deadLetters = new DeadLetterMover(ctx, bus.scripts(), listener, bus.commandTimeoutMillis(), bus.clock());
        this.dispatcher = new Dispatcher(ctx, handler, batchHandler, inFlight, acker, deadLetters,
                new Retrier(ctx, bus.scripts(), bus.delays(), listener), listener, bus.scripts(),
                bus.commandTimeoutMillis(), bus.gate(), flow);
        this.readLoop = new ReadLoop(ctx, reader, bus.scripts(), bus.groups(), readSlots,
                dispatcher, listener, bus.commandTimeoutMillis(), groupsCreated);
        this.reclaimer = new Reclaimer(ctx, bus.scripts(), reclaimSlots, dispatcher, inFlight, listener,
                bus.commandTimeoutMillis(), readLoop::ownPendingReread, this::reclaimSoon, flow);
        this.reclaimLoop = new PeriodicLoop("runbus-reclaim-" + ctx.describe(), o.claimInterval(), reclaimer,
                listener);
        this.keepAliveLoop = new PeriodicLoop("runbus-keepalive-" + ctx.describe(), o.keepAliveInterval(),
                new KeepAlive(ctx, bus.scripts(), inFlight, listener, bus.commandTimeoutMillis(), flow), listener);
        this.ownedExecutor = o.executor() == null ? Executors.newFixedThreadPool(o.concurrency(),
                threads("runbus-handler-" + ctx.describe())) : null;
    }

    @Override
    protected boolean readLoopAlive() {
        return readLoop.isAlive();
    }

    /**
     * Start order: the consumers of work before its producers, so nothing read waits for a missing loop
     * (the acker needs no start: acks leave from the threads that finish handlers). The reclaimer takes a
     * partition's entries only once the read loop has re-read this consumer's own pending entries there.
     */
    @Override
    public RedisSubscription start() {
        if (ctx.options().ackMode() != dev.runbus.AckMode.BEFORE_WORK) {
            // not needed, only quicker: the first record is then sent whole after a NOSCRIPT answer
            scripts.loadRecordStarts(ctx.partitions().names(), ctx.group()).whenComplete((ok, e) -> {
                if (e != null) {
                    log.debug("{}: could not load the start-record script ahead: {}", ctx.describe(), e.toString());
                }
            });
        }
        dispatcher.start(ownedExecutor != null ? ownedExecutor : ctx.options().executor());
        deadLetters.start();
        keepAliveLoop.start();
        readLoop.start();
        ifOpen(reclaimLoop::start);
        if (flow != null) {
            flow.start();
        }
        return this;
    }

    /** A claim the reclaimer left in flight was answered: its entries are handed on now, not at the next round. */
    private void reclaimSoon() {
        reclaimLoop.runSoon();
    }

    @Override
    public int inFlight() {
        return inFlight.size();
    }

    /*
     * The shutdown order (also in Bus's documentation):
     * 1. stop taking work: read loop (unblocked at once), then reclaimer;
     * 2. let read and running handlers finish, up to shutdownTimeout, still kept alive; past it, start
     *    nothing more and apply no outcome to what still runs (it stays pending);
     * 3. stop the keep-alive;
     * 4. make the queued dead-letter moves and flush the acks;
     * 5. stop the handler threads this subscription owns and its read connection, and remove its heartbeat
     *    (also when a step above failed).
     */

    /** Step 1. */
    @Override
    protected void stopWork() {
        readLoop.close();
        reclaimer.stop();
        reclaimLoop.close();
        if (flow != null) {
            flow.close();
        }
    }

    /** Steps 2 to 5 (the heartbeat goes with the name, in the frame). */
    @Override
    protected void finishWork() {
        if (!drain(dispatcher::drain)) {
            int running = inFlight.size();
            int dropped = dispatcher.stop();
            log.warn("{}: {} handlers still running and {} queued entries after {}; they stay pending and will "
                    + "be delivered again", ctx.describe(), running - dropped, dropped, ctx.options().shutdownTimeout());
        }
        keepAliveLoop.close();
        deadLetters.close();
        acker.close();
        if (ownedExecutor != null) {
            ownedExecutor.shutdownNow();
        }
        reader.close();
    }

    private static ThreadFactory threads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
