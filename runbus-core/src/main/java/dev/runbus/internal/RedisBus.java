package dev.runbus.internal;

import dev.runbus.BatchHandler;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.DeadLetters;
import dev.runbus.Handler;
import dev.runbus.Inspector;
import dev.runbus.FlowRate;
import dev.runbus.Message;
import dev.runbus.PublishOptions;
import dev.runbus.Publisher;
import dev.runbus.RunbusException;
import dev.runbus.Scheduled;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import dev.runbus.internal.admin.RedisInspector;
import dev.runbus.internal.admin.Retention;
import dev.runbus.internal.consume.BusServices;
import dev.runbus.internal.consume.BusSubscription;
import dev.runbus.internal.consume.FlowControl;
import dev.runbus.internal.consume.Groups;
import dev.runbus.internal.consume.HandlerGate;
import dev.runbus.internal.consume.PeriodicLoop;
import dev.runbus.internal.consume.RedisSubscription;
import dev.runbus.internal.consume.StartRecordSweep;
import dev.runbus.internal.consume.SubscriptionContext;
import dev.runbus.internal.deadletter.DeadLetterAlarm;
import dev.runbus.internal.deadletter.RedisDeadLetters;
import dev.runbus.internal.delay.DelayMover;
import dev.runbus.internal.delay.RedisScheduled;
import dev.runbus.internal.flow.FlowCaps;
import dev.runbus.internal.ordered.OrderedSubscription;
import dev.runbus.internal.redis.BatchConnection;
import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.internal.redis.StreamReader;
import dev.runbus.internal.registry.ConsumerRegistry;
import dev.runbus.internal.registry.Heartbeats;
import dev.runbus.internal.registry.TopicRegistry;
import dev.runbus.internal.scripts.FunctionCalls;
import dev.runbus.internal.scripts.LibraryLoads;
import dev.runbus.internal.scripts.LuaFixes;
import dev.runbus.internal.scripts.ScriptCalls;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.BusMeters;
import dev.runbus.internal.telemetry.GaugeReader;
import dev.runbus.internal.telemetry.SafeListener;
import dev.runbus.internal.telemetry.TraceHooks;
import io.lettuce.core.XReadArgs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The bus on one Redis deployment ({@link RedisLink}: a server, Sentinel or a cluster): a shared connection for
 * publishing, acks and scripts (Lettuce pipelines concurrent commands on it), one more per subscription for
 * its blocking reads ({@link StreamReader}), and the bus-wide loops (heartbeat, janitor, retention).
 */
public final class RedisBus implements Bus {

    /**
     * A stream id above every real one, for a read that takes nothing. Not the highest id there is: XREADGROUP
     * takes that one to mean {@code >} (it is how Redis writes {@code >} inside) and would hand out new entries.
     */
    private static final String ABOVE_EVERY_ID = "18446744073709551615-18446744073709551614";

    private final BusConfig config;
    private final RedisLink link;
    private final ScriptCalls calls;
    private final BatchConnection batches;
    private final Keys keys;
    private final SafeListener listener;
    private final Scripts scripts;
    private final Groups groups;
    private final TopicRegistry topics;
    private final ConsumerRegistry consumers;
    private final RedisDeadLetters deadLetters;
    private final RedisInspector inspector;
    private final Map<String, BusSubscription> subscriptions = new ConcurrentHashMap<>();
    private final Heartbeats heartbeats;
    private final PeriodicLoop heartbeat;
    private final PeriodicLoop janitor;
    private final StartRecordSweep startRecords;
    private final DelayMover delays;
    private final RedisScheduled scheduled;
    private final Retention retention;
    private final PeriodicLoop retentionLoop;
    private final TraceHooks tracing;
    private final BusMeters meters;
    /** XADD's IDMP for every publisher of this bus, when the server has it. */
    private final IdempotentAppends appends;
    /** What every subscription takes from this bus. */
    private final BusServices services;
    /** Reads the gauges that need Redis; null without a meter registry. */
    private final PeriodicLoop gaugeLoop;
    private volatile boolean closed;

    private RedisBus(BusConfig config, RedisLink link, ScriptCalls calls) {
        this.config = config;
        this.link = link;
        this.calls = calls;
        this.batches = new BatchConnection(link);
        this.appends = new IdempotentAppends(link.version().hasIdempotentAppends());
        this.keys = new Keys(config.keyPrefix());
        this.listener = new SafeListener(config.listener());
        this.scripts = new Scripts(calls, link.sync(), link.async(), keys);
        this.groups = new Groups(link.async(), keys, config.commandTimeout().toMillis());
        this.topics = new TopicRegistry(calls, link.sync(), keys, config::partitionsOf);
        this.consumers = new ConsumerRegistry(link.sync(), scripts, keys, topics, config.consumerDeadAfter(),
                listener);
        DeadLetterAlarm alarm = new DeadLetterAlarm(link.sync(), keys, this::deadLetterDepth, listener);
        listener.add(alarm);
        this.deadLetters = new RedisDeadLetters(link.sync(), scripts, keys, topics, alarm::depthMayHaveFallen);
        this.retention = new Retention(calls, link.sync(), keys, config.retentionAge(), config.retentionKeepLast(),
                config.deadLetterRetention(), listener, link.version().hasAckedTrim());
        this.inspector = new RedisInspector(link.sync(), keys, topics, consumers, retention);
        this.heartbeats = new Heartbeats(scripts, link.async(), keys, config.heartbeatInterval(),
                config.commandTimeout().toMillis(), listener);
        this.heartbeat = new PeriodicLoop("runbus-heartbeat", config.heartbeatInterval(), heartbeats::beat, listener);
        this.janitor = new PeriodicLoop("runbus-janitor", config.janitorInterval(), this::prune, listener);
        this.startRecords = new StartRecordSweep(scripts, listener, config.commandTimeout().toMillis());
        this.delays = new DelayMover(scripts, listener, config.delayPollInterval().toMillis(),
                config.commandTimeout().toMillis());
        this.scheduled = new RedisScheduled(link.sync(), scripts, keys, topics, listener);
        this.retentionLoop = config.retention() || config.deadLetterRetention() != null
                ? new PeriodicLoop(Retention.LOOP, config.retentionInterval(), this::retain, listener) : null;
        this.tracing = TraceHooks.of(config.tracing());
        GaugeReader gauges = config.meterRegistry() == null ? null
                : new GaugeReader(inspector, scheduled, this::subscribedTopics, listener);
        this.meters = BusMeters.of(config.meterRegistry(), gauges);
        this.listener.measureWith(meters);
        this.services = new BusServices(listener, link.sync(), link.async(), calls, scripts, keys, delays,
                config.clock(), config.commandTimeout().toMillis(), groups, !link.cluster(), new HandlerGate());
        this.gaugeLoop = gauges == null ? null
                : new PeriodicLoop("runbus-gauges", config.meterRefreshInterval(), gauges, listener);
    }

    public static RedisBus connect(BusConfig config) {
        Objects.requireNonNull(config, "config");
        RedisLink link = RedisLink.open(config);
        ScriptCalls calls;
        try {
            if (config.unpatchedServerWarning()) {
                LuaFixes.warnIfUnpatched(link.version());
            }
            calls = ScriptCalls.choose(config.scriptMode(), link.version());
            if (calls instanceof FunctionCalls functions) {
                // At connect, so that a user who may not load a missing library learns it here, not from a loop.
                LibraryLoads.ensure(functions.library(), link.masters(), config.commandTimeout().toMillis());
            }
        } catch (RuntimeException e) {
            link.close();
            throw e;
        }
        RedisBus bus = new RedisBus(config, link, calls);
        bus.heartbeat.start();
        bus.janitor.start();
        bus.delays.start();
        if (bus.retentionLoop != null) {
            bus.retentionLoop.start();
        }
        if (bus.gaugeLoop != null) {
            bus.gaugeLoop.start();
        }
        return bus;
    }

    @Override
    public Publisher publisher() {
        return publisher(PublishOptions.DEFAULT);
    }

    @Override
    public Publisher publisher(PublishOptions options) {
        requireOpen();
        return tracing.publisher(meters.timed(new RedisPublisher(link.async(), batches, keys, topics,
                Objects.requireNonNull(options, "options"), config.commandTimeout().toMillis(), scripts, calls,
                delays, appends)));
    }

    @Override
    public Subscription subscribe(String topic, String group, String consumer, Handler handler,
                                  SubscribeOptions options) {
        return start(topic, group, consumer, tracing.handler(Objects.requireNonNull(handler, "handler")), null, options);
    }

    @Override
    public Subscription subscribeBatch(String topic, String group, String consumer, BatchHandler handler,
                                       SubscribeOptions options) {
        return start(topic, group, consumer, null, tracing.batchHandler(Objects.requireNonNull(handler, "handler")),
                options);
    }

    private Subscription start(String topic, String group, String consumer, Handler handler,
                               BatchHandler batchHandler, SubscribeOptions options) {
        requireOpen();
        Keys.checkTopic(topic);
        Keys.checkName("group", group);
        Keys.checkName("consumer", consumer);
        Objects.requireNonNull(options, "options");
        if (batchHandler != null && options.flowFairness() == dev.runbus.FlowFairness.BY_HANDLER_TIME) {
            // A batch's entries are timed together: each would be charged the whole batch's time.
            throw new IllegalArgumentException("flowFairness BY_HANDLER_TIME measures each handler's time: subscribe "
                    + "with a Handler, not a BatchHandler, or use BY_COST");
        }
        if (options.ordered() && batchHandler != null) {
            throw new IllegalArgumentException("ordered consumption runs one entry at a time: subscribe with a Handler,"
                    + " not a BatchHandler");
        }
        String id = topic + "\n" + group + "\n" + consumer;
        Partitions partitions = topics.register(topic);
        SubscriptionContext ctx = SubscriptionContext.of(group, consumer, partitions, keys, options);
        if (options.flowControlled()) {
            FlowControl.configure(ctx, services); // refused before the group exists if another group has the topic
        }
        Set<Integer> groupsCreated = groups.createAll(partitions, group);
        Calls.call("reading group " + group + " of " + topic, () -> {
            requireReadRights(partitions.name(groupsCreated.iterator().next()), group, consumer);
            return null;
        });
        StreamReader reads = link.openReader(options.blockTime().plus(config.commandTimeout()));
        Heartbeats.Name name = new Heartbeats.Name(topic, group, consumer);
        // The heartbeat goes before the name is freed: a subscription under the same name on this bus can
        // only start after both, so it neither finds the old heartbeat nor loses its own to the old removal.
        Runnable onClosed = () -> {
            delays.unwatch(partitions);
            heartbeats.stop(name);
            subscriptions.remove(id);
        };
        BusSubscription sub = options.ordered() ? new OrderedSubscription(ctx, handler, services, reads, onClosed)
                : new RedisSubscription(ctx, handler, batchHandler, services, reads, groupsCreated, onClosed);
        if (subscriptions.putIfAbsent(id, sub) != null) {
            reads.close();
            throw new IllegalArgumentException("consumer '" + consumer + "' of group '" + group + "' on topic '"
                    + topic + "' is already subscribed on this bus");
        }
        meters.subscribed(topic, group);
        try {
            delays.watch(partitions); // first: the close below unwatches whatever failed after it
            heartbeats.start(name);
            Subscription started = sub.start();
            if (gaugeLoop != null) {
                gaugeLoop.runSoon(); // the new topic's gauges, without waiting for the next round
            }
            return started;
        } catch (RuntimeException e) {
            sub.close(); // stops whatever started, closes the read connection, frees the name
            throw e;
        }
    }

    /**
     * A Redis user that may create the group but not read from it would see subscribe succeed and then its read
     * loop fail over and over, reported only to listeners: the commands the read loop sends first are tried here
     * once, on partition {@code name}, so that subscribe fails and names the command Redis refused. Nothing is taken:
     * the XREADGROUP reads the consumer's own pending entries after an id above every real one. One partition is
     * enough (rights are by command and by key pattern, and a topic's keys share its prefix).
     */
    private void requireReadRights(String name, String group, String consumer) {
        link.sync().clientId();
        link.sync().xreadgroup(io.lettuce.core.Consumer.from(group, consumer),
                XReadArgs.StreamOffset.from(keys.stream(name), ABOVE_EVERY_ID));
    }

    @Override
    public DeadLetters deadLetters() {
        return deadLetters;
    }

    @Override
    public Scheduled scheduled() {
        return scheduled;
    }

    @Override
    public AutoCloseable addListener(dev.runbus.BusListener extra) {
        return listener.add(extra);
    }

    @Override
    public Map<String, String> currentTraceContext() {
        return tracing.currentContext();
    }

    @Override
    public Inspector inspector() {
        return inspector;
    }

    @Override
    public List<String> pruneDeadConsumers(String topic, String group) {
        Keys.checkTopic(topic);
        Keys.checkName("group", group);
        return consumers.pruneDead(topic, group);
    }

    /**
     * One pass of the janitor. Each group is pruned on its own: one that fails (say a group gone from under its
     * subscription, deleted by another tool or lost by Redis, until its read loop creates it again) is reported and
     * holds back neither the other groups nor the sweep of the start records, which removes a gone group's whole.
     */
    private void prune() {
        Set<String> groups = new java.util.HashSet<>();
        Map<String, Partitions> unordered = new java.util.HashMap<>();
        for (BusSubscription s : subscriptions.values()) {
            groups.add(s.topic() + "\n" + s.group());
            if (!s.ctx.options().ordered()) {
                unordered.putIfAbsent(s.group() + "\n" + s.topic(), s.ctx.partitions());
            }
        }
        for (String key : groups) {
            String[] tg = key.split("\n", 2);
            try {
                consumers.pruneDead(tg[0], tg[1]);
            } catch (RuntimeException e) {
                listener.onLoopError("runbus-janitor: pruning the dead consumers of " + tg[0] + "/" + tg[1], e);
            }
        }
        unordered.forEach((key, partitions) -> startRecords.sweep(partitions, key.split("\n", 2)[0]));
    }

    /** The topics this bus subscribes to, each once. */
    private java.util.Collection<String> subscribedTopics() {
        Set<String> topics = new java.util.TreeSet<>();
        subscriptions.values().forEach(s -> topics.add(s.topic()));
        return topics;
    }

    /** One retention round over the topics this bus subscribes to, every partition of each. */
    private void retain() {
        Map<String, Partitions> subscribed = new java.util.TreeMap<>();
        for (BusSubscription s : subscriptions.values()) {
            subscribed.computeIfAbsent(s.topic(), topics::recorded);
        }
        retention.round(subscribed.values(), config.retention());
    }

    @Override
    public int setFlowCap(String topic, String flowKey, int cap) {
        if (cap < 0) {
            throw new IllegalArgumentException("a flow key's cap must be 0 or more, got " + cap);
        }
        return flowCap(topic, flowKey, cap);
    }

    @Override
    public int clearFlowCap(String topic, String flowKey) {
        return flowCap(topic, flowKey, null);
    }

    @Override
    public int setFlowRate(String topic, String flowKey, FlowRate rate) {
        Objects.requireNonNull(rate, "rate (clearFlowRate gives the key the group's rate again)");
        return flowRate(topic, flowKey, rate);
    }

    @Override
    public int clearFlowRate(String topic, String flowKey) {
        return flowRate(topic, flowKey, null);
    }

    @Override
    public int setFlowTopicCap(String topic, int cap) {
        if (cap < 0) {
            throw new IllegalArgumentException("a topic's cap must be 0 or more, got " + cap);
        }
        return flowTopicCap(topic, cap);
    }

    @Override
    public int clearFlowTopicCap(String topic) {
        return flowTopicCap(topic, null);
    }

    @Override
    public int setFlowTopicRate(String topic, FlowRate rate) {
        java.util.Objects.requireNonNull(rate, "rate");
        return onTopic(topic, "a topic rate", "setting the flow rate of topic ", caps -> caps.topicRate(rate));
    }

    @Override
    public int clearFlowTopicRate(String topic) {
        return onTopic(topic, "a topic rate", "setting the flow rate of topic ", caps -> caps.topicRate(null));
    }

    @Override
    public int setFlowWeight(String topic, String flowKey, double weight) {
        if (!(weight >= FlowCaps.MIN_WEIGHT && weight <= FlowCaps.MAX_WEIGHT)) {
            throw new IllegalArgumentException("a flow key's weight must be from " + FlowCaps.MIN_WEIGHT + " (one "
                    + "millionth) to " + (long) FlowCaps.MAX_WEIGHT + ", got " + weight);
        }
        return onFlowKey(topic, flowKey, "setting the flow weight of ", caps -> caps.weight(flowKey, weight));
    }

    @Override
    public int clearFlowWeight(String topic, String flowKey) {
        return onFlowKey(topic, flowKey, "setting the flow weight of ", caps -> caps.weight(flowKey, null));
    }

    private int flowTopicCap(String topic, Integer cap) {
        return onTopic(topic, "a topic cap", "setting the flow cap of topic ", caps -> caps.topicCap(cap));
    }

    /**
     * A topic's cap and rate live in its one partition's caps: a topic with partitions has none. Returns how many
     * entries {@code change} admitted.
     */
    private int onTopic(String topic, String limit, String what,
                        java.util.function.Function<FlowCaps, List<String>> change) {
        requireOpen();
        Keys.checkTopic(topic);
        Partitions partitions = topics.register(topic);
        if (partitions.count() > 1) {
            throw new IllegalArgumentException(limit + " needs an unpartitioned topic: " + topic + " has "
                    + partitions.count() + " partitions (docs/flow-control.md)");
        }
        String name = partitions.name(0);
        return Calls.call(what + topic, () -> change.apply(new FlowCaps(calls, link.sync(), null, keys, name))).size();
    }

    private int flowCap(String topic, String flowKey, Integer cap) {
        return onFlowKey(topic, flowKey, "setting the flow cap of ", caps -> caps.cap(flowKey, cap));
    }

    private int flowRate(String topic, String flowKey, FlowRate rate) {
        return onFlowKey(topic, flowKey, "setting the flow rate of ", caps -> caps.rate(flowKey, rate));
    }

    /**
     * A flow key's cap and rate live in the caps of its partition, the only one its entries reach; returns how many
     * entries {@code change} admitted.
     */
    private int onFlowKey(String topic, String flowKey, String what,
                          java.util.function.Function<FlowCaps, List<String>> change) {
        requireOpen();
        Keys.checkTopic(topic);
        Message.checkFlowKey(flowKey);
        Partitions partitions = topics.register(topic);
        String name = partitions.name(partitions.partitionFor(flowKey));
        return Calls.call(what + flowKey + " on " + topic,
                () -> change.apply(new FlowCaps(calls, link.sync(), null, keys, name))).size();
    }

    /**
     * Destroys the group on every partition's stream together with its start and retry records there, one script per
     * partition (delete_group.lua: a group created again under the name inherits no handler starts), then forgets its
     * heartbeats and memberships. The leases and fencing counters stay: a lease expires on its own, so a holder that
     * is paused now starts nothing beside the next owner, and the counter keeps the tokens of a group of the same
     * name growing past those a consumer of the old group may still hold.
     */
    @Override
    public boolean deleteGroup(String topic, String group) {
        requireOpen();
        Keys.checkTopic(topic);
        Keys.checkName("group", group);
        boolean existed = false;
        for (String name : topics.recorded(topic).names()) {
            existed |= scripts.deleteGroup(name, group);
        }
        Calls.call("deleting the heartbeats of " + topic + "/" + group,
                () -> link.sync().del(keys.heartbeats(topic, group)));
        Calls.call("deleting the members of " + topic + "/" + group, () -> link.sync().del(keys.members(topic, group)));
        return existed;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<BusSubscription> all = new ArrayList<>(subscriptions.values());
        all.forEach(BusSubscription::stopTakingWork);
        all.forEach(BusSubscription::finishClose);
        heartbeat.close();
        janitor.close();
        delays.close();
        if (retentionLoop != null) {
            retentionLoop.close();
        }
        if (gaugeLoop != null) {
            gaugeLoop.close();
        }
        meters.close();
        batches.close();
        link.close();
    }

    private void requireOpen() {
        if (closed) {
            throw new RunbusException("the bus is closed");
        }
    }

    /** The dead letters of {@code topic}, all partitions (for the dead-letter alarm). */
    private long deadLetterDepth(String topic) {
        return deadLetters.count(topic);
    }

}
