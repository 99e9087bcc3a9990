package dev.runbus;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * How one subscription reads, runs and recovers. Immutable; build with {@link #builder()}, whose
 * defaults are the public constants below. Validated when built: a wrong value fails fast with a
 * message naming the option.
 *
 * @param concurrency       handlers running at once for this consumer (for a {@link BatchHandler}: batch
 *                          calls); the consumer holds at most {@code concurrency + 2 × batchSize} entries
 *                          read but not yet settled, and its reclaimer up to {@code batchSize} more
 * @param batchSize         entries per XREADGROUP / XAUTOCLAIM call, and so the most a batch call receives;
 *                          also how many entries may wait locally for a free handler
 * @param blockTime         how long one XREADGROUP waits for new entries
 * @param minIdle           how long an entry must be idle in the PEL before another consumer may take
 *                          it over: a dead consumer's entries are taken over between {@code minIdle − 1.5 ×
 *                          keepAliveInterval} (about {@code minIdle / 2} by default) and
 *                          {@code minIdle + claimInterval} after its death, as idle time counts from the delivery
 *                          or the last keep-alive. With {@link RetryPolicy#onIdle()} it is also about
 *                          the retry delay after a failed handler (a retry after a long handler can come sooner)
 * @param maxDeliveries     deliveries after which a failing entry is moved to the dead-letter stream
 * @param claimInterval     how often the reclaimer looks for idle entries
 * @param keepAliveInterval how often a running handler's claim is refreshed; at most half of {@code minIdle}
 * @param shutdownTimeout   how long {@code close()} waits for running handlers
 * @param ackMode           ack after work (default) or, opt-in, before work
 * @param executor          where handlers run; {@code null} means a pool of {@code concurrency} platform
 *                          threads owned by the subscription. A supplied executor (for example
 *                          {@code Executors.newVirtualThreadPerTaskExecutor()}) must be able to run
 *                          {@code concurrency} tasks at once and is not shut down by the bus.
 * @param ordered           per-partition order (default false): each partition of the topic is owned by one
 *                          consumer of the group at a time, through a lease, and its owner handles its entries one
 *                          at a time in stream order; partitions run in parallel up to {@code concurrency}. A
 *                          failed entry is retried in place after {@link #retryDelay its retry delay} (the retry
 *                          policy's, or {@code minIdle} with {@link RetryPolicy#onIdle()}) and holds its partition
 *                          until it succeeds or is dead-lettered at {@code maxDeliveries}. Every consumer of a
 *                          group must use the same mode. See docs/architecture.md, "Partitions and order"
 * @param leaseTime         ordered only: how long a partition's lease lasts without renewal, so how long a
 *                          partition of a crashed consumer waits before another takes it over; renewed every
 *                          {@code min(leaseTime / 3, 1 s)}, so three times per lease or more. Default
 *                          {@value #DEFAULT_LEASE_SECONDS} s
 * @param retryPolicy       when a failed delivery is tried again: {@link RetryPolicy#onIdle()} (default) after
 *                          {@code minIdle}, or after a delay of its own ({@link RetryPolicy#fixed},
 *                          {@link RetryPolicy#exponential}) through the stream's delay set (on an ordered
 *                          subscription, in place)
 * @param flowCap           flow control (docs/flow-control.md): when 0 or more, at most this many entries of one
 *                          {@link Message#flowKey() flow key} run at once across the group's consumers, the others
 *                          waiting outside the stream, undelivered, until a slot frees; 0 holds every key's entries
 *                          back. A slot is a lease of {@code minIdle} that the keep-alive renews, so a dead
 *                          consumer's slots come back within {@code minIdle + claimInterval}. One group per topic
 *                          may set it; not with {@code ordered} or ack-before-work. Default
 *                          {@value #FLOW_CONTROL_OFF}: off, entries run as they come (unless {@code flowRate} is
 *                          set: then no cap)
 * @param flowRate          flow control: the entries of one flow key are let into the stream at most at this rate
 *                          ({@link FlowRate}: permits per period, with a burst), on the Redis clock, the others waiting
 *                          outside the stream as for a cap; with or without {@code flowCap}, and with the same
 *                          conditions. Default null: no rate limit
 * @param flowTopicCap      flow control: when 0 or more, at most this many entries with a flow key run at once in
 *                          the whole topic, across its keys and the group's consumers; a slot that frees goes to the
 *                          waiting key whose turn it is by start-time fair queueing, so that each key with waiting
 *                          entries gets the same share (or its share by {@link Bus#setFlowWeight weight}). With or
 *                          without {@code flowCap} and {@code flowRate}, and with the same conditions; on an
 *                          unpartitioned topic only (refused at subscribe on one with partitions). Default
 *                          {@value #FLOW_CONTROL_OFF}: no cap for the topic
 * @param flowPriorityAging flow control: how long waiting is worth one step of {@link Message#priority() priority}.
 *                          A flow key's next message is its most urgent waiting one unless a less urgent one has
 *                          waited longer than the steps between them are worth: a message of priority p waits behind
 *                          later, more urgent ones of its key at most {@code (9 - p) × flowPriorityAging}. Positive;
 *                          default {@value #DEFAULT_FLOW_PRIORITY_AGING_SECONDS} s
 * @param flowTopicRate     flow control: the entries with a flow key of the whole topic are let into the stream at
 *                          most at this rate ({@link FlowRate}), across all keys, the keys taking turns as under
 *                          {@code flowTopicCap} (fair shares by weight); with or without the other limits, and with
 *                          the same conditions; on an unpartitioned topic only. Default null: no rate for the topic
 * @param flowFairness      flow control: what the fair shares of {@code flowTopicCap} and {@code flowTopicRate} count:
 *                          {@link FlowFairness#BY_COST} (each message its declared cost) or
 *                          {@link FlowFairness#BY_HANDLER_TIME} (the time its handler ran). {@code BY_HANDLER_TIME}
 *                          needs one of the two. Default {@code BY_COST}
 */
public record SubscribeOptions(int concurrency, int batchSize, Duration blockTime, Duration minIdle,
                               int maxDeliveries, Duration claimInterval, Duration keepAliveInterval,
                               Duration shutdownTimeout, AckMode ackMode, Executor executor, boolean ordered,
                               Duration leaseTime, RetryPolicy retryPolicy, int flowCap, FlowRate flowRate,
                               int flowTopicCap, Duration flowPriorityAging, FlowRate flowTopicRate,
                               FlowFairness flowFairness) {

    public static final int DEFAULT_CONCURRENCY = 8;
    public static final int DEFAULT_BATCH_SIZE = 100;
    public static final Duration DEFAULT_BLOCK_TIME = Duration.ofSeconds(2);
    public static final Duration DEFAULT_MIN_IDLE = Duration.ofSeconds(30);
    public static final int DEFAULT_MAX_DELIVERIES = 3;
    public static final Duration DEFAULT_CLAIM_INTERVAL = Duration.ofSeconds(5);
    public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);
    public static final int DEFAULT_LEASE_SECONDS = 10;
    /** {@link #flowCap()} when flow control is off (the default). */
    public static final int FLOW_CONTROL_OFF = -1;
    public static final int DEFAULT_FLOW_PRIORITY_AGING_SECONDS = 60;

    /** The options as they were before {@link #flowPriorityAging()} and {@link #flowTopicRate()}: their defaults. */
    public SubscribeOptions(int concurrency, int batchSize, Duration blockTime, Duration minIdle, int maxDeliveries,
                            Duration claimInterval, Duration keepAliveInterval, Duration shutdownTimeout,
                            AckMode ackMode, Executor executor, boolean ordered, Duration leaseTime,
                            RetryPolicy retryPolicy, int flowCap, FlowRate flowRate, int flowTopicCap) {
        this(concurrency, batchSize, blockTime, minIdle, maxDeliveries, claimInterval, keepAliveInterval,
                shutdownTimeout, ackMode, executor, ordered, leaseTime, retryPolicy, flowCap, flowRate, flowTopicCap,
                Duration.ofSeconds(DEFAULT_FLOW_PRIORITY_AGING_SECONDS), null);
    }

    /** The options as they were before {@link #flowFairness()}: {@link FlowFairness#BY_COST}. */
    public SubscribeOptions(int concurrency, int batchSize, Duration blockTime, Duration minIdle, int maxDeliveries,
                            Duration claimInterval, Duration keepAliveInterval, Duration shutdownTimeout,
                            AckMode ackMode, Executor executor, boolean ordered, Duration leaseTime,
                            RetryPolicy retryPolicy, int flowCap, FlowRate flowRate, int flowTopicCap,
                            Duration flowPriorityAging, FlowRate flowTopicRate) {
        this(concurrency, batchSize, blockTime, minIdle, maxDeliveries, claimInterval, keepAliveInterval,
                shutdownTimeout, ackMode, executor, ordered, leaseTime, retryPolicy, flowCap, flowRate, flowTopicCap,
                flowPriorityAging, flowTopicRate, FlowFairness.BY_COST);
    }

    public SubscribeOptions {
        requireAtLeast("concurrency", concurrency, 1);
        requireAtLeast("batchSize", batchSize, 1);
        requireAtLeast("maxDeliveries", maxDeliveries, 1);
        requirePositive("blockTime", blockTime);
        requirePositive("minIdle", minIdle);
        requirePositive("claimInterval", claimInterval);
        requirePositive("keepAliveInterval", keepAliveInterval);
        requirePositive("shutdownTimeout", shutdownTimeout);
        Objects.requireNonNull(ackMode, "ackMode");
        requirePositive("leaseTime", leaseTime);
        requirePositive("flowPriorityAging", flowPriorityAging);
        Objects.requireNonNull(retryPolicy, "retryPolicy");
        Objects.requireNonNull(flowFairness, "flowFairness");
        if (flowFairness == FlowFairness.BY_HANDLER_TIME && flowTopicCap == FLOW_CONTROL_OFF && flowTopicRate == null) {
            throw new IllegalArgumentException("flowFairness " + flowFairness + " shares a topic's capacity between "
                    + "flow keys: it needs flowTopicCap or flowTopicRate");
        }
        if (flowFairness == FlowFairness.BY_HANDLER_TIME && ordered) {
            throw new IllegalArgumentException("flowFairness " + flowFairness + " measures handlers as their slots "
                    + "are given back, which an ordered group's entries do not take: use BY_COST");
        }
        if (!retryPolicy.isOnIdle() && ackMode != AckMode.AFTER_WORK) {
            throw new IllegalArgumentException("a retry policy retries failed deliveries, which ackMode "
                    + ackMode + " never has: use RetryPolicy.onIdle() or AFTER_WORK");
        }
        if (leaseTime.toMillis() < 300) {
            throw new IllegalArgumentException("leaseTime must be at least 300 ms, got " + leaseTime);
        }
        if (ordered && ackMode != AckMode.AFTER_WORK) {
            throw new IllegalArgumentException("ordered consumption acknowledges after work: ackMode must be "
                    + "AFTER_WORK, got " + ackMode);
        }
        // A held entry can stay idle for up to 1.5 keep-alive intervals between renewals; half of minIdle
        // leaves room for a slow Redis round trip or a short pause.
        if (keepAliveInterval.multipliedBy(2).compareTo(minIdle) > 0) {
            throw new IllegalArgumentException("keepAliveInterval (" + keepAliveInterval
                    + ") must be at most half of minIdle (" + minIdle + "), or running handlers lose their claim");
        }
        if (minIdle.toMillis() < 10) {
            throw new IllegalArgumentException("minIdle must be at least 10 ms, got " + minIdle);
        }
        if (flowCap < FLOW_CONTROL_OFF) {
            throw new IllegalArgumentException("flowCap must be 0 or more (or FLOW_CONTROL_OFF, -1), got " + flowCap);
        }
        if (flowTopicCap < FLOW_CONTROL_OFF) {
            throw new IllegalArgumentException("flowTopicCap must be 0 or more (or FLOW_CONTROL_OFF, -1), got "
                    + flowTopicCap);
        }
        String flow = flowCap != FLOW_CONTROL_OFF ? "flowCap" : flowRate != null ? "flowRate"
                : flowTopicCap != FLOW_CONTROL_OFF ? "flowTopicCap" : flowTopicRate != null ? "flowTopicRate" : null;
        String cap = flowCap != FLOW_CONTROL_OFF ? "flowCap" : flowTopicCap != FLOW_CONTROL_OFF ? "flowTopicCap" : null;
        if (cap != null && ordered) {
            // A flow key chooses its messages' partition, whose owner runs them one at a time already: ordered
            // consumption takes the rates only.
            throw new IllegalArgumentException(cap + " does not apply to ordered consumption: a flow key's messages "
                    + "share a partition, whose owner already runs them one at a time (flowRate and flowTopicRate do "
                    + "apply)");
        }
        if (flow != null && ackMode != AckMode.AFTER_WORK) {
            throw new IllegalArgumentException(flow + " holds a slot until the entry's ack after work: ackMode must "
                    + "be AFTER_WORK, got " + ackMode);
        }
    }

    /**
     * Whether flow control is on: {@link #flowCap()} or {@link #flowTopicCap()} is 0 or more, or a {@link #flowRate()}
     * or {@link #flowTopicRate()} is set.
     */
    public boolean flowControlled() {
        return flowCap != FLOW_CONTROL_OFF || flowRate != null || flowTopicCap != FLOW_CONTROL_OFF
                || flowTopicRate != null;
    }

    /**
     * How long after the failed delivery {@code failed} the entry is tried again: the retry policy's delay for
     * that attempt, or {@code minIdle} with {@link RetryPolicy#onIdle()} (it is then taken over once idle that long).
     */
    public Duration retryDelay(Delivery failed) {
        return retryPolicy.isOnIdle() ? minIdle : retryPolicy.delayAfter(failed.attempt(), failed.message().id());
    }

    /** Defaults everywhere. */
    public static SubscribeOptions defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from these values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.concurrency = concurrency;
        b.batchSize = batchSize;
        b.blockTime = blockTime;
        b.minIdle = minIdle;
        b.maxDeliveries = maxDeliveries;
        b.claimInterval = claimInterval;
        b.keepAliveInterval = keepAliveInterval;
        b.shutdownTimeout = shutdownTimeout;
        b.ackMode = ackMode;
        b.executor = executor;
        b.ordered = ordered;
        b.leaseTime = leaseTime;
        b.retryPolicy = retryPolicy;
        b.flowCap = flowCap;
        b.flowRate = flowRate;
        b.flowTopicCap = flowTopicCap;
        b.flowPriorityAging = flowPriorityAging;
        b.flowTopicRate = flowTopicRate;
        b.flowFairness = flowFairness;
        return b;
    }

    private static void requireAtLeast(String name, int value, int min) {
        if (value < min) {
            throw new IllegalArgumentException(name + " must be at least " + min + ", got " + value);
        }
    }

    private static void requirePositive(String name, Duration value) {
        Objects.requireNonNull(value, name);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }

    /** Builder for {@link SubscribeOptions}; unset options take the {@code DEFAULT_*} values. */
    public static final class Builder {
        private int concurrency = DEFAULT_CONCURRENCY;
        private int batchSize = DEFAULT_BATCH_SIZE;
        private Duration blockTime = DEFAULT_BLOCK_TIME;
        private Duration minIdle = DEFAULT_MIN_IDLE;
        private int maxDeliveries = DEFAULT_MAX_DELIVERIES;
        private Duration claimInterval = DEFAULT_CLAIM_INTERVAL;
        private Duration keepAliveInterval;
        private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
        private AckMode ackMode = AckMode.AFTER_WORK;
        private Executor executor;
        private boolean ordered;
        private Duration leaseTime = Duration.ofSeconds(DEFAULT_LEASE_SECONDS);
        private int flowCap = FLOW_CONTROL_OFF;
        private FlowRate flowRate;
        private int flowTopicCap = FLOW_CONTROL_OFF;
        private Duration flowPriorityAging = Duration.ofSeconds(DEFAULT_FLOW_PRIORITY_AGING_SECONDS);
        private FlowRate flowTopicRate;
        private FlowFairness flowFairness = FlowFairness.BY_COST;
        private RetryPolicy retryPolicy = RetryPolicy.onIdle();

        private Builder() {
        }

        public Builder concurrency(int v) {
            concurrency = v;
            return this;
        }

        public Builder batchSize(int v) {
            batchSize = v;
            return this;
        }

        public Builder blockTime(Duration v) {
            blockTime = v;
            return this;
        }

        public Builder minIdle(Duration v) {
            minIdle = v;
            return this;
        }

        public Builder maxDeliveries(int v) {
            maxDeliveries = v;
            return this;
        }

        public Builder claimInterval(Duration v) {
            claimInterval = v;
            return this;
        }

        /** Default: a third of {@code minIdle}. */
        public Builder keepAliveInterval(Duration v) {
            keepAliveInterval = v;
            return this;
        }

        public Builder shutdownTimeout(Duration v) {
            shutdownTimeout = v;
            return this;
        }

        public Builder ackMode(AckMode v) {
            ackMode = v;
            return this;
        }

        public Builder executor(Executor v) {
            executor = v;
            return this;
        }

        /** Per-partition order; see {@link SubscribeOptions#ordered()}. */
        public Builder ordered(boolean v) {
            ordered = v;
            return this;
        }

        public Builder leaseTime(Duration v) {
            leaseTime = v;
            return this;
        }

        /** Default {@link RetryPolicy#onIdle()}; see {@link SubscribeOptions#retryPolicy()}. */
        public Builder retryPolicy(RetryPolicy v) {
            retryPolicy = v;
            return this;
        }

        /** Default {@value #FLOW_CONTROL_OFF} (off); see {@link SubscribeOptions#flowCap()}. */
        public Builder flowCap(int v) {
            flowCap = v;
            return this;
        }

        /** Default null (no rate limit); see {@link SubscribeOptions#flowRate()}. */
        public Builder flowRate(FlowRate v) {
            flowRate = v;
            return this;
        }

        /** Default {@value #FLOW_CONTROL_OFF} (no cap for the topic); see {@link SubscribeOptions#flowTopicCap()}. */
        public Builder flowTopicCap(int v) {
            flowTopicCap = v;
            return this;
        }

        /**
         * Default {@value #DEFAULT_FLOW_PRIORITY_AGING_SECONDS} s; see {@link SubscribeOptions#flowPriorityAging()}.
         */
        public Builder flowPriorityAging(Duration v) {
            flowPriorityAging = v;
            return this;
        }

        /** Default null (no rate for the topic); see {@link SubscribeOptions#flowTopicRate()}. */
        public Builder flowTopicRate(FlowRate v) {
            flowTopicRate = v;
            return this;
        }

        /** Default {@link FlowFairness#BY_COST}; see {@link SubscribeOptions#flowFairness()}. */
        public Builder flowFairness(FlowFairness v) {
            flowFairness = v;
            return this;
        }

        public SubscribeOptions build() {
            Duration keepAlive = keepAliveInterval;
            if (keepAlive == null && minIdle != null) {
                keepAlive = minIdle.dividedBy(3);
            }
            return new SubscribeOptions(concurrency, batchSize, blockTime, minIdle, maxDeliveries, claimInterval,
                    keepAlive, shutdownTimeout, ackMode, executor, ordered, leaseTime, retryPolicy, flowCap,
                    flowRate, flowTopicCap, flowPriorityAging, flowTopicRate, flowFairness);
        }
    }
}
