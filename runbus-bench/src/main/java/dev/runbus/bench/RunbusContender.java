package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Handler;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * runbus itself: one {@link Bus}, one subscription per consumer. {@code concurrency} 1 per consumer, so that
 * C consumers run C handlers at once, as the other contenders' C loops do; otherwise the defaults
 * (batch 100, ack after work, acks group-committed by the acker) with a short block time. The variant
 * {@link #oneSubscription} runs C handlers as one subscription of {@code concurrency} C instead: one read
 * loop and one acker for all of them, the way a user with many handler threads would rather subscribe. The
 * variant {@link #olderPath} is runbus with {@code runbus.redis.commandsUpTo=8.0}: on a Redis 8.2 or later server,
 * the path older servers get, measured beside the server's own in the same rounds.
 */
final class RunbusContender implements Contender {

    static final String NAME = "runbus";
    static final String ONE_SUBSCRIPTION = "runbus, 1 subscription";
    static final String OLDER_PATH = "runbus, Redis 8.0 path";
    /** The version {@link #olderPath} caps the server at. */
    static final String OLDER_PATH_VERSION = "8.0";
    /** The system property the bus reads at connect (README, "Configuration"). */
    private static final String COMMANDS_UP_TO = "runbus.redis.commandsUpTo";

    private final String redisUri;
    private final String prefix;
    private final boolean poisonAware;
    private final int maxDeliveries;
    private final java.util.function.Consumer<BusConfig.Builder> config;
    /** One subscription of concurrency C instead of C subscriptions of concurrency 1. */
    private final boolean single;
    /** runbus.redis.commandsUpTo for this contender's bus; null: the server's own version. */
    private final String commandsUpTo;
    private Bus bus;
    private volatile boolean ackObserved = true;

    /** {@code poisonAware}: the handler throws on poison payloads (the poison scenario's handler). */
    RunbusContender(String redisUri, String prefix, boolean poisonAware, int maxDeliveries) {
        this(redisUri, prefix, poisonAware, maxDeliveries, b -> { }, false);
    }

    /** {@code config} adjusts the bus's configuration (the memory scenario's retention). */
    RunbusContender(String redisUri, String prefix, boolean poisonAware, int maxDeliveries,
                    java.util.function.Consumer<BusConfig.Builder> config) {
        this(redisUri, prefix, poisonAware, maxDeliveries, config, false);
    }

    private RunbusContender(String redisUri, String prefix, boolean poisonAware, int maxDeliveries,
                            java.util.function.Consumer<BusConfig.Builder> config, boolean single) {
        this(redisUri, prefix, poisonAware, maxDeliveries, config, single, null);
    }

    private RunbusContender(String redisUri, String prefix, boolean poisonAware, int maxDeliveries,
                            java.util.function.Consumer<BusConfig.Builder> config, boolean single,
                            String commandsUpTo) {
        this.commandsUpTo = commandsUpTo;
        this.single = single;
        this.config = config;
        this.redisUri = redisUri;
        this.prefix = prefix;
        this.poisonAware = poisonAware;
        this.maxDeliveries = maxDeliveries;
    }

    RunbusContender(String redisUri, String prefix) {
        this(redisUri, prefix, false, SubscribeOptions.DEFAULT_MAX_DELIVERIES);
    }

    /** C handlers as one subscription of concurrency C. */
    static RunbusContender oneSubscription(String redisUri, String prefix) {
        return new RunbusContender(redisUri, prefix, false, SubscribeOptions.DEFAULT_MAX_DELIVERIES, b -> { }, true);
    }

    /** runbus on the path older servers get: what a Redis 8 server's own commands are measured against. */
    static RunbusContender olderPath(String redisUri, String prefix) {
        return new RunbusContender(redisUri, prefix, false, SubscribeOptions.DEFAULT_MAX_DELIVERIES, b -> { }, false,
                OLDER_PATH_VERSION);
    }

    /** The version this contender's bus caps the server at ({@code runbus.redis.commandsUpTo}); null: none. */
    String commandsUpTo() {
        return commandsUpTo;
    }

    @Override
    public String name() {
        return commandsUpTo != null ? OLDER_PATH : single ? ONE_SUBSCRIPTION : NAME;
    }

    @Override
    public String describe() {
        if (commandsUpTo != null) {
            return "as runbus, with -Drunbus.redis.commandsUpTo=" + commandsUpTo + " while its bus connects: no XADD"
                    + " … IDMP, no XTRIM … ACKED (docs/architecture.md, \"What each server gets\")";
        }
        return single ? "one subscription of concurrency C on one bus (one read loop and one acker for the C"
                + " handlers), batch 100, ack after work, block 100 ms"
                : "one subscription per consumer, concurrency 1, batch 100, ack after work (the acker group-commits"
                + " XACKs), block 100 ms";
    }

    @Override
    public String keyPrefix() {
        return prefix;
    }

    /** False if the ack time could not be observed in some latency run (then handler return was used). */
    boolean ackObserved() {
        return ackObserved;
    }

    private synchronized Bus bus() {
        if (bus == null) {
            BusConfig.Builder b = BusConfig.builder(redisUri).keyPrefix(prefix);
            config.accept(b);
            bus = commandsUpTo == null ? Bus.connect(b.build()) : connectCapped(b.build(), commandsUpTo);
        }
        return bus;
    }

    @Override
    public Consumers start(Target target, int consumers, Probe probe) {
        SubscribeOptions options = SubscribeOptions.builder().concurrency(single ? consumers : 1)
                .blockTime(Duration.ofMillis(100)).maxDeliveries(maxDeliveries).build();
        AckObserver.Expected acks = probe.timing() ? new AckObserver.Expected(probe) : null;
        Handler handler = d -> {
            if (poisonAware || acks != null) {
                byte[] payload = d.message().payload();
                probe.handled();
                if (poisonAware && Payloads.isPoison(payload)) {
                    throw new IllegalStateException("poison message " + d.message().id());
                }
                if (acks != null) {
                    if (ackObserved) {
                        acks.expect(d.streamId(), Payloads.enqueuedAt(payload));
                    } else {
                        probe.acked(Payloads.enqueuedAt(payload), Payloads.now()); // fallback: handler return
                    }
                }
            } else {
                probe.handled();
            }
        };
        List<Subscription> subs = new ArrayList<>();
        for (int i = 0; i < (single ? 1 : consumers); i++) {
            Subscription s = bus().subscribe(target.topic(), target.group(), "runbus-" + i, handler, options);
            subs.add(s);
            if (acks != null && !new AckObserver(acks).install(s)) {
                ackObserved = false;
            }
        }
        return () -> subs.forEach(Subscription::close);
    }

    /** Subscribes with given options and handler (recovery and memory scenarios). */
    Subscription subscribe(Target target, String consumer, Handler handler, SubscribeOptions options) {
        return bus().subscribe(target.topic(), target.group(), consumer, handler, options);
    }

    @Override
    public synchronized void close() {
        if (bus != null) {
            bus.close();
            bus = null;
        }
    }

    /**
     * Connects with the system property set: the bus reads it once, at connect. The contenders connect one after
     * another on the scenario's thread, so no other bus connects meanwhile.
     */
    static Bus connectCapped(BusConfig config, String commandsUpTo) {
        synchronized (RunbusContender.class) {
            String before = System.getProperty(COMMANDS_UP_TO);
            System.setProperty(COMMANDS_UP_TO, commandsUpTo);
            try {
                return Bus.connect(config);
            } finally {
                if (before == null) {
                    System.clearProperty(COMMANDS_UP_TO);
                } else {
                    System.setProperty(COMMANDS_UP_TO, before);
                }
            }
        }
    }
}
