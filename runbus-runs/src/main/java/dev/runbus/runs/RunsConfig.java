package dev.runbus.runs;

import dev.runbus.RetryPolicy;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.internal.store.SqlIdentifier;
import java.time.Duration;
import java.util.Objects;

/**
 * How the runs layer stores and triggers runs. Immutable; build with {@link #builder()}.
 *
 * @param schema          PostgreSQL schema of the tables; default {@value #DEFAULT_SCHEMA}
 * @param topic           bus topic of run triggers; default {@value #DEFAULT_TOPIC}
 * @param group           consumer group of the workers; default {@value #DEFAULT_GROUP}
 * @param consumer        this process's consumer name, stable across restarts and unique among live
 *                        processes (set it when two run on one host); default: the host name
 * @param workerOptions   the workers' subscription options (concurrency, minIdle, maxDeliveries, ...); default:
 *                        the bus defaults with {@value #DEFAULT_WORKER_CONCURRENCY} run handlers at once. The
 *                        worker reads triggers in batches of {@code batchSize}; {@code concurrency} is how many
 *                        run handlers run at once, on {@code executor} when one is given (it must run that many
 *                        tasks at once and never drop one it accepted) or else on threads of the runs layer.
 *                        {@code maxDeliveries} caps a run's attempts between two replays by PostgreSQL's count
 *                        too: a run that already had that many is failed, not executed, when a trigger
 *                        the sweeper republished after Redis lost its data arrives. Its retry policy is
 *                        {@code retryPolicy} below (leave {@code workerOptions.retryPolicy} at its default)
 * @param sweepInterval   how often the sweeper runs; default 30 s
 * @param sweepThreshold  an unfinished run untouched this long is examined by the sweeper; default 2 min
 * @param sweepBatch      runs examined per sweep, each sweep continuing after the last run the previous one
 *                        examined; default 500
 * @param ordered         runs in per-user order (default false): the runs of one user execute one at a time, in
 *                        submission order. PostgreSQL decides: an attempt of a run starts only when every run of
 *                        the same user submitted before it is done, failed, cancelled or expired, however its triggers
 *                        arrive (a trigger the sweeper republished lands behind later ones). Triggers are
 *                        published keyed by the user id, so one user's runs share a partition of {@code topic}, and
 *                        the worker consumes with {@link SubscribeOptions#ordered() ordered} consumption, one run at
 *                        a time per partition: the partitions are the parallelism. Give the topic several partitions
 *                        with {@code BusConfig.builder(..).partitions(topic, n)} (the count lives in the bus's
 *                        configuration only, where the bus checks it against Redis; with 1 partition every run
 *                        waits for the one before it). Per user rather than per session: a user's runs may
 *                        touch state shared across that user's sessions, and a session's runs are a subset of
 *                        its user's, so they keep their order too. The first ordered runs layer creates an index
 *                        on unfinished runs by user (unordered runs do not maintain it). Requires
 *                        {@code workerOptions.maxDeliveries()} of at least 2 (a run waiting for an earlier one
 *                        retries in place, then starts its trigger over; see {@code OrderedRunWorker})
 * @param retryPolicy     when a run whose attempt failed is tried again, given to the workers' subscription; default
 *                        {@link #DEFAULT_RETRY_POLICY}, {@code exponential(1 s, 2, 30 s, 0.2)}: about 1 s after the
 *                        first failure, 2 s after the second, then 4, 8, 16 and 30 s at most, each delay drawn
 *                        between 80% and 100% of that (so runs that failed together do not come back together).
 *                        With the default {@code maxDeliveries} of 3 a poison run is failed about 3 s after its
 *                        first attempt. {@link RetryPolicy#onIdle()} retries after {@code workerOptions.minIdle}
 *                        instead. When the next attempt is due is kept on the run: {@link Run#nextAttemptAt()}
 * @param migrate         whether {@link Runs#create} creates and upgrades the tables (default true). False, for a
 *                        database role that may read and write the runs tables but not create them: nothing is
 *                        created, and {@code create} fails unless the schema is at this version's migration (and
 *                        has the index of ordered runs when {@code ordered}); see {@link RunsSchema}
 * @param meterRegistry   a Micrometer {@code io.micrometer.core.instrument.MeterRegistry} the runs layer registers
 *                        its meters with (docs/metrics.md): submissions, submit-to-done times, run counts. Typed
 *                        {@code Object} so that a runs layer without one never loads a Micrometer class
 *                        ({@code micrometer-core} is an optional dependency). Default null: no meters
 * @param meterRefreshInterval how often the run counts are read from PostgreSQL for the gauges, on a thread of their
 *                        own (a scrape never waits for PostgreSQL). Default 10 s
 * @param readTimeout     the longest one of {@link Runs#list}, {@link Runs#get}, {@link Runs#replies} and
 *                        {@link Runs#effects} may take in PostgreSQL, lock waits included ({@code statement_timeout},
 *                        set for that read only); past it the call throws {@link RunStoreException}. These reads run
 *                        on the pool the workers use: an API that lists runs for anyone who asks should bound them.
 *                        Default {@link Duration#ZERO}: none of the runs layer's own ({@code runbus serve} sets 5 s,
 *                        {@code --api-statement-timeout})
 * @param cancelGrace     how long a handler whose run's cancel was asked for ({@link Runs#cancel}) may go on after it
 *                        is told ({@link RunContext#isCancelRequested()}) before its thread is interrupted; default
 *                        {@value #DEFAULT_CANCEL_GRACE_SECONDS} s. Zero interrupts it as it is told
 * @param cancelCheckInterval how often a worker reads, besides the NOTIFY each cancel sends, which of its running
 *                        runs have a cancel request: the bound on telling a handler when a notification was lost
 *                        (its connection broke). One query of the handlers' run ids per interval, while any run;
 *                        default 1 s
 * @param executionTimeout how long one attempt's handler may run, for runs without a {@link NewRun#timeout()} of their
 *                        own: then it is told as of a cancel and, {@code cancelGrace} later, interrupted, and the
 *                        attempt counts as failed (retried under {@code retryPolicy}). Default {@link Duration#ZERO}:
 *                        none
 */
public record RunsConfig(String schema, String topic, String group, String consumer, SubscribeOptions workerOptions,
                         Duration sweepInterval, Duration sweepThreshold, int sweepBatch, boolean ordered,
                         RetryPolicy retryPolicy, boolean migrate, Object meterRegistry,
                         Duration meterRefreshInterval, Duration readTimeout, Duration cancelGrace,
                         Duration cancelCheckInterval, Duration executionTimeout) {

    public static final String DEFAULT_SCHEMA = "runbus";
    public static final String DEFAULT_TOPIC = "runs";
    public static final String DEFAULT_GROUP = "run-workers";
    public static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofSeconds(30);
    public static final Duration DEFAULT_SWEEP_THRESHOLD = Duration.ofMinutes(2);
    public static final int DEFAULT_SWEEP_BATCH = 500;
    public static final int DEFAULT_WORKER_CONCURRENCY = 64;
    public static final Duration DEFAULT_METER_REFRESH_INTERVAL = Duration.ofSeconds(10);
    public static final long DEFAULT_CANCEL_GRACE_SECONDS = 10;
    public static final Duration DEFAULT_CANCEL_GRACE = Duration.ofSeconds(DEFAULT_CANCEL_GRACE_SECONDS);
    public static final Duration DEFAULT_CANCEL_CHECK_INTERVAL = Duration.ofSeconds(1);
    /** 1, 2, 4, 8, 16, then 30 s after each failure, less up to 20% jitter. */
    public static final RetryPolicy DEFAULT_RETRY_POLICY =
            RetryPolicy.exponential(Duration.ofSeconds(1), 2, Duration.ofSeconds(30), 0.2);

    /**
     * {@code value} if it is a lower-case SQL identifier, as runbus writes schema and role names into SQL
     * unquoted; otherwise an error naming {@code what}.
     */
    static String identifier(String what, String value) {
        return SqlIdentifier.check(what, value);
    }

    public RunsConfig {
        identifier("schema", schema);
        requireText("topic", topic);
        requireText("group", group);
        requireText("consumer", consumer);
        Objects.requireNonNull(workerOptions, "workerOptions");
        requirePositive("sweepInterval", sweepInterval);
        requirePositive("sweepThreshold", sweepThreshold);
        requirePositive("meterRefreshInterval", meterRefreshInterval);
        Objects.requireNonNull(cancelGrace, "cancelGrace");
        if (cancelGrace.isNegative()) {
            throw new IllegalArgumentException("cancelGrace must not be negative, got " + cancelGrace);
        }
        requirePositive("cancelCheckInterval", cancelCheckInterval);
        if (cancelCheckInterval.toMillis() < 1) {
            throw new IllegalArgumentException("cancelCheckInterval must be at least 1 ms, got " + cancelCheckInterval);
        }
        Objects.requireNonNull(executionTimeout, "executionTimeout");
        if (executionTimeout.isNegative() || !executionTimeout.isZero() && executionTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("executionTimeout must be zero (none) or at least 1 ms, got "
                    + executionTimeout);
        }
        Objects.requireNonNull(readTimeout, "readTimeout");
        if (readTimeout.isNegative() || !readTimeout.isZero() && readTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("readTimeout must be zero (none) or at least 1 ms, got " + readTimeout);
        }
        if (meterRegistry != null && !isMeterRegistry(meterRegistry.getClass())) {
            throw new IllegalArgumentException("meterRegistry must be a io.micrometer.core.instrument.MeterRegistry, got "
                    + meterRegistry.getClass().getName());
        }
        if (sweepBatch < 1) {
            throw new IllegalArgumentException("sweepBatch must be at least 1, got " + sweepBatch);
        }
        if (ordered && workerOptions.maxDeliveries() < 2) {
            throw new IllegalArgumentException("ordered runs need workerOptions.maxDeliveries of at least 2 (a run "
                    + "waiting for an earlier run of its user retries in place, then starts its trigger over), got "
                    + workerOptions.maxDeliveries());
        }
        Objects.requireNonNull(retryPolicy, "retryPolicy");
        if (!workerOptions.retryPolicy().isOnIdle() && !workerOptions.retryPolicy().equals(retryPolicy)) {
            throw new IllegalArgumentException("set the runs' retry policy with RunsConfig.retryPolicy, not "
                    + "workerOptions.retryPolicy (which is " + workerOptions.retryPolicy() + ", while retryPolicy is "
                    + retryPolicy + ")");
        }
        try {
            workerOptions.toBuilder().retryPolicy(retryPolicy).build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("retryPolicy " + retryPolicy + " does not fit workerOptions: "
                    + e.getMessage(), e);
        }
    }

    /**
     * Whether runs' flow keys reach their triggers: when the workers' options set flow control
     * ({@link SubscribeOptions#flowControlled()}). Without it a flow key is stored with its run and its trigger goes
     * without one: a trigger with a flow key on a topic that no subscription flow-controls would wait for one.
     */
    public boolean flowControlled() {
        return workerOptions.flowControlled();
    }

    /** The flow key a run's trigger carries: {@code flowKey} when {@link #flowControlled()}, else none. */
    public String triggerFlowKey(String flowKey) {
        return flowControlled() ? flowKey : null;
    }

    /** The workers' subscription: {@code workerOptions} with the runs' {@code retryPolicy}. */
    public SubscribeOptions workerSubscription() {
        return workerOptions.toBuilder().retryPolicy(retryPolicy).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    private static void requireText(String name, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(name + " must not be blank");
        }
    }

    private static void requirePositive(String name, Duration d) {
        Objects.requireNonNull(d, name);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + d);
        }
    }

    /** By name, so that the check loads no Micrometer class. */
    private static boolean isMeterRegistry(Class<?> c) {
        for (; c != null; c = c.getSuperclass()) {
            if (c.getName().equals("io.micrometer.core.instrument.MeterRegistry")) {
                return true;
            }
        }
        return false;
    }

    /**
     * The consumer name a runs layer takes when none is given: the {@code HOSTNAME} variable, else the host's name,
     * else {@code runbus-worker}.
     */
    public static String hostName() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env.trim();
        }
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "runbus-worker";
        }
    }

    /** Builder for {@link RunsConfig}; unset options take the {@code DEFAULT_*} values. */
    public static final class Builder {
        private String schema = DEFAULT_SCHEMA;
        private String topic = DEFAULT_TOPIC;
        private String group = DEFAULT_GROUP;
        private String consumer;
        private SubscribeOptions workerOptions = SubscribeOptions.builder().concurrency(DEFAULT_WORKER_CONCURRENCY).build();
        private Duration sweepInterval = DEFAULT_SWEEP_INTERVAL;
        private Duration sweepThreshold = DEFAULT_SWEEP_THRESHOLD;
        private int sweepBatch = DEFAULT_SWEEP_BATCH;
        private boolean ordered;
        private RetryPolicy retryPolicy = DEFAULT_RETRY_POLICY;
        private boolean migrate = true;
        private Object meterRegistry;
        private Duration meterRefreshInterval = DEFAULT_METER_REFRESH_INTERVAL;
        private Duration readTimeout = Duration.ZERO;
        private Duration cancelGrace = DEFAULT_CANCEL_GRACE;
        private Duration cancelCheckInterval = DEFAULT_CANCEL_CHECK_INTERVAL;
        private Duration executionTimeout = Duration.ZERO;

        private Builder() {
        }

        public Builder schema(String v) {
            schema = v;
            return this;
        }

        public Builder topic(String v) {
            topic = v;
            return this;
        }

        public Builder group(String v) {
            group = v;
            return this;
        }

        public Builder consumer(String v) {
            consumer = v;
            return this;
        }

        public Builder workerOptions(SubscribeOptions v) {
            workerOptions = v;
            return this;
        }

        public Builder sweepInterval(Duration v) {
            sweepInterval = v;
            return this;
        }

        public Builder sweepThreshold(Duration v) {
            sweepThreshold = v;
            return this;
        }

        public Builder sweepBatch(int v) {
            sweepBatch = v;
            return this;
        }

        /** Runs in per-user order; see {@link RunsConfig#ordered()}. Default false. */
        public Builder ordered(boolean v) {
            ordered = v;
            return this;
        }

        /** When a failed run is tried again; see {@link RunsConfig#retryPolicy()}. */
        public Builder retryPolicy(RetryPolicy v) {
            retryPolicy = v;
            return this;
        }

        /** Whether the runs layer creates and upgrades its tables; see {@link RunsConfig#migrate()}. Default true. */
        public Builder migrate(boolean v) {
            migrate = v;
            return this;
        }

        /**
         * Registers the runs layer's meters with {@code registry}, an {@code io.micrometer.core.instrument.MeterRegistry}
         * (docs/metrics.md); default none. Typed {@code Object} for the reason {@code BusConfig.Builder.meterRegistry}
         * gives.
         */
        public Builder meterRegistry(Object registry) {
            meterRegistry = registry;
            return this;
        }

        /** How often the run counts are read for the gauges; default 10 s. */
        public Builder meterRefreshInterval(Duration v) {
            meterRefreshInterval = v;
            return this;
        }

        /** How long each of the callers' reads may take; see {@link RunsConfig#readTimeout()}. Default none. */
        public Builder readTimeout(Duration v) {
            readTimeout = v;
            return this;
        }

        /** How long a cancelled run's handler may go on before it is interrupted; default 10 s. */
        public Builder cancelGrace(Duration v) {
            cancelGrace = v;
            return this;
        }

        /** How often a worker checks its running runs for cancel requests besides NOTIFY; default 1 s. */
        public Builder cancelCheckInterval(Duration v) {
            cancelCheckInterval = v;
            return this;
        }

        /** How long an attempt's handler may run when its run sets no timeout; default none (zero). */
        public Builder executionTimeout(Duration v) {
            executionTimeout = v;
            return this;
        }

        public RunsConfig build() {
            return new RunsConfig(schema, topic, group, consumer == null ? hostName() : consumer, workerOptions,
                    sweepInterval, sweepThreshold, sweepBatch, ordered, retryPolicy, migrate, meterRegistry,
                    meterRefreshInterval, readTimeout, cancelGrace, cancelCheckInterval, executionTimeout);
        }
    }
}
