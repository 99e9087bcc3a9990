package dev.runbus;

import dev.runbus.internal.RedisBus;
import java.util.List;
import java.util.Map;

/**
 * The entry point: one connection to Redis shared by publishers, subscriptions, the dead-letter store and
 * the inspector. Thread-safe. Create with {@link #connect(BusConfig)} and close when done.
 *
 * <!-- snippet: runbus-examples/src/main/java/dev/runbus/examples/JavadocExamples.java#bus -->
 * <pre>{@code
 * CountDownLatch handled = new CountDownLatch(1);
 * try (Bus bus = Bus.connect(BusConfig.builder("redis://127.0.0.1:6379").build());
 *      Subscription billing = bus.subscribe("orders", "billing", "billing-1", d -> {
 *          System.out.println(new String(d.message().payload(), StandardCharsets.UTF_8));
 *          handled.countDown();
 *      })) {
 *     byte[] order = "{\"order\":1}".getBytes(StandardCharsets.UTF_8);
 *     bus.publisher().publish("orders", Message.of("order.created", order));
 *     handled.await(30, TimeUnit.SECONDS);   // a service keeps its subscription open until it stops
 * }   // closes the subscription (its running handlers finish, their acks are sent), then the bus
 * }</pre>
 *
 * <h2>Shutdown order</h2>
 * {@link #close()} closes every subscription, each in this order: (1) stop the read loop (a blocked
 * XREADGROUP is unblocked at once) and the reclaimer, so nothing new is taken; (2) let running and
 * already-read handlers finish, up to {@code shutdownTimeout}, while the keep-alive still refreshes their
 * claims; (3) stop the keep-alive; (4) make the dead-letter moves already decided and flush pending
 * acknowledgements; (5) stop the handler threads it owns, close its read connection and remove its
 * heartbeat. Then the bus stops the heartbeat, the janitor and retention, and closes its Redis connections.
 */
public interface Bus extends AutoCloseable {

    /** Connects to Redis and starts the heartbeat, janitor and retention loops. Fails fast if Redis does not answer. */
    static Bus connect(BusConfig config) {
        return RedisBus.connect(config);
    }

    /** A publisher without a length cap. */
    Publisher publisher();

    Publisher publisher(PublishOptions options);

    /**
     * Starts a consumer named {@code consumer} in {@code group} of {@code topic}. The group is created when
     * missing (reading from the start of the stream); an existing group is used as it is. The consumer first
     * processes the entries still pending under its own name (from an earlier run), then new ones, each partition on
     * its own: a partition whose Redis master does not answer (a cluster master stopped) waits alone, its group created
     * and its entries read once the master answers, while the others are served; subscribe fails only when no
     * partition answers.
     *
     * <p>Names: topic, group and consumer are non-empty, without whitespace; a topic has no braces.
     * Consumer names should be stable across restarts (for example the host name or a StatefulSet ordinal),
     * so that a restarted process recovers its own pending entries at once.
     *
     * @throws IllegalArgumentException for a bad name, or a consumer already subscribed on this bus
     */
    Subscription subscribe(String topic, String group, String consumer, Handler handler, SubscribeOptions options);

    default Subscription subscribe(String topic, String group, String consumer, Handler handler) {
        return subscribe(topic, group, consumer, handler, SubscribeOptions.defaults());
    }

    /**
     * Like {@link #subscribe(String, String, String, Handler, SubscribeOptions)}, with a handler that receives
     * the deliveries of each read together (at most {@code batchSize}); see {@link BatchHandler} for how each
     * delivery is settled. {@code concurrency} is how many batch calls run at once.
     */
    Subscription subscribeBatch(String topic, String group, String consumer, BatchHandler handler,
                                SubscribeOptions options);

    default Subscription subscribeBatch(String topic, String group, String consumer, BatchHandler handler) {
        return subscribeBatch(topic, group, consumer, handler, SubscribeOptions.defaults());
    }

    DeadLetters deadLetters();

    /** The entries scheduled for later (delayed publishes and retries), to list and cancel. */
    Scheduled scheduled();

    /**
     * Adds a listener besides the one in {@link BusConfig}; layers built on the bus (the runs layer) use it to
     * hear about dead letters. Close the returned handle to remove it.
     */
    AutoCloseable addListener(BusListener listener);

    Inspector inspector();

    /**
     * Deletes the consumers of a group that are dead (no heartbeat for {@code consumerDeadAfter}, or without
     * a heartbeat — another client's, or closed cleanly — and idle that long) and whose pending list is
     * empty. A consumer with pending entries is never deleted: its entries would become unclaimable. The
     * janitor calls this periodically for the groups this bus subscribes to. Returns the deleted names.
     */
    List<String> pruneDeadConsumers(String topic, String group);

    /**
     * Deletes a consumer group gone for good: destroys it on the stream of every partition of {@code topic}
     * (with its pending list: what it had not acknowledged is no longer tracked for it, nor how often its handlers
     * started on it: a group created again under the name counts every delivery afresh) and removes its
     * heartbeats and ordered-group memberships. Retention then stops keeping entries for it. Stop its consumers
     * first: a consumer still subscribed finds the group missing on its next read and creates it again at the
     * start of the stream (as after Redis lost its data), so it handles every entry still retained once more.
     * Returns whether the group existed on any partition.
     */
    boolean deleteGroup(String topic, String group);

    /**
     * Sets the cap of one flow key on {@code topic} in place of the flow-controlled group's
     * {@link SubscribeOptions#flowCap() flowCap} (docs/flow-control.md): raised, it admits the key's waiting entries
     * at once; lowered, it admits none until fewer than {@code cap} run (running ones finish); 0 holds the key back.
     * Kept in Redis with the key's waiting entries (a Redis that loses its data loses it: set it again). Returns how
     * many waiting entries it admitted.
     */
    int setFlowCap(String topic, String flowKey, int cap);

    /** Gives {@code flowKey} the group's {@code flowCap} again (see {@link #setFlowCap}); returns how many it admitted. */
    int clearFlowCap(String topic, String flowKey);

    /**
     * Sets the rate of one flow key on {@code topic} in place of the flow-controlled group's
     * {@link SubscribeOptions#flowRate() flowRate} (docs/flow-control.md, "Rate limits"): from now on its entries are
     * let in at most at {@code rate}, starting afresh (up to its burst at once, admitted now) unless it has that rate
     * already (then nothing changes). Kept in Redis as {@link #setFlowCap} is. Returns how many waiting entries it
     * admitted.
     */
    int setFlowRate(String topic, String flowKey, FlowRate rate);

    /**
     * Gives {@code flowKey} the group's {@code flowRate} again, starting afresh (see {@link #setFlowRate}); returns how
     * many it admitted.
     */
    int clearFlowRate(String topic, String flowKey);

    /**
     * Sets the cap of the whole of {@code topic} in place of the flow-controlled group's
     * {@link SubscribeOptions#flowTopicCap() flowTopicCap} (docs/flow-control.md, "A cap for the topic"): raised, it
     * admits waiting entries at once, in fair order; lowered, it admits none until fewer than {@code cap} run. Kept in
     * Redis as {@link #setFlowCap} is; an unpartitioned topic only. Returns how many waiting entries it admitted.
     */
    int setFlowTopicCap(String topic, int cap);

    /** Gives {@code topic} the group's {@code flowTopicCap} again (none if it sets none); returns how many it admitted. */
    int clearFlowTopicCap(String topic);

    /**
     * Sets the rate of the whole of {@code topic} in place of the flow-controlled group's
     * {@link SubscribeOptions#flowTopicRate() flowTopicRate} (docs/flow-control.md, "A rate for the topic"), starting
     * afresh (up to its burst at once, admitted now). Kept in Redis as {@link #setFlowCap} is; an unpartitioned topic
     * only. Returns how many waiting entries it admitted.
     */
    int setFlowTopicRate(String topic, FlowRate rate);

    /** Gives {@code topic} the group's {@code flowTopicRate} again (none if it sets none); returns how many it admitted. */
    int clearFlowTopicRate(String topic);

    /**
     * Sets the weight of one flow key on {@code topic} under a topic cap (default 1; from a millionth to a million):
     * while several keys wait for the topic's slots, each gets slots in proportion to its weight (a key of weight 2
     * twice as many as one of weight 1). Kept in Redis as {@link #setFlowCap} is. Returns how many waiting entries it
     * admitted.
     */
    int setFlowWeight(String topic, String flowKey, double weight);

    /** Gives {@code flowKey} the weight 1 again (see {@link #setFlowWeight}); returns how many it admitted. */
    int clearFlowWeight(String topic, String flowKey);

    /**
     * The calling thread's trace context as the message headers a publish would write ({@code traceparent},
     * {@code tracestate}); empty when tracing is off ({@link BusConfig#tracing()}) or there is no context. For a
     * message built now and published later on another thread: a publish keeps the context a message already
     * carries, as the parent of its producer span.
     */
    default Map<String, String> currentTraceContext() {
        return Map.of();
    }

    /** Closes all subscriptions (see the shutdown order above), then the bus's loops and connections. */
    @Override
    void close();
}
