package dev.runbus.spring;

import dev.runbus.AckMode;
import dev.runbus.ScriptMode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Every {@code runbus.*} property. The defaults written here are the library's own ({@code BusConfig},
 * {@code SubscribeOptions}, {@code RunsConfig}); they are literals so that the configuration processor can show
 * them to an IDE, and {@code RunbusAutoConfigurationTest.theDefaultsOfThePropertiesAreTheLibrarys} keeps them equal to the library's constants.
 */
@ConfigurationProperties(prefix = "runbus")
public class RunbusProperties {

    /**
     * Redis URL of the bus (redis://, rediss://, redis-sentinel://…#master, redis-cluster://). When unset, the
     * URL is made from Spring Boot's spring.data.redis.* settings.
     */
    private String redisUrl;

    /**
     * PEM file of the CA certificates that sign the Redis servers' certificates, for rediss:// and
     * rediss-cluster:// URLs (the host name is still verified). When unset: the JVM's trust store.
     */
    private Path redisTlsCa;

    /** First part of every Redis key the bus writes: no whitespace, braces, glob characters or colon. */
    private String keyPrefix = "runbus";

    /**
     * This process's consumer name in every group it joins: stable across restarts, unique among live processes.
     * When unset: spring.application.name and the host name, else the host name.
     */
    private String consumer;

    /** How long one Redis command may take before it fails. */
    private Duration commandTimeout = Duration.ofSeconds(10);

    /** How often each consumer records that it is alive. */
    private Duration heartbeatInterval = Duration.ofSeconds(5);

    /** A consumer silent this long counts as dead; the janitor deletes it once its pending list is empty. */
    private Duration consumerDeadAfter = Duration.ofMinutes(10);

    /** How often the janitor looks for dead consumers. */
    private Duration janitorInterval = Duration.ofMinutes(1);

    /** How often, at most, the delay mover looks at a delay set it believes has nothing due. */
    private Duration delayPollInterval = Duration.ofMillis(100);

    /** How the bus runs its Lua scripts: AUTO (functions on Redis 7+ and Valkey), EVAL or FUNCTIONS. */
    private ScriptMode scriptMode = ScriptMode.AUTO;

    /** Partition count per topic, for topics with more than one (runbus.partitions.orders=16). */
    private Map<String, Integer> partitions = new LinkedHashMap<>();

    /** How often the gauges that need Redis are read (when a MeterRegistry is present). */
    private Duration meterRefreshInterval = Duration.ofSeconds(10);

    /**
     * OpenTelemetry trace context on publishes and deliveries: OFF, GLOBAL (GlobalOpenTelemetry, as the Java agent
     * sets it, read when the bus connects) or BEAN (the application's OpenTelemetry bean). Needs opentelemetry-api.
     */
    private TracingKind tracing = TracingKind.OFF;

    private final Health health = new Health();

    private final Retention retention = new Retention();

    private final Listener listener = new Listener();

    private final Runs runs = new Runs();

    /** Retention: trimming the streams of the topics this application subscribes to. */
    public static class Retention {

        /** Whether this bus trims the streams of the topics it subscribes to, never past what a group still needs. */
        private boolean enabled = true;

        /** Entries younger than this are kept even when every group is done with them (Redis clock). */
        private Duration age = Duration.ofHours(1);

        /** The newest entries of each partition kept whatever their age, 0 to 10000. */
        private int keepLast = 0;

        /** How often retention runs. */
        private Duration interval = Duration.ofSeconds(30);

        /** Dead letters older than this are trimmed; unset (the default) keeps them until purged. */
        private Duration deadLetters;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getAge() {
            return age;
        }

        public void setAge(Duration age) {
            this.age = age;
        }

        public int getKeepLast() {
            return keepLast;
        }

        public void setKeepLast(int keepLast) {
            this.keepLast = keepLast;
        }

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        public Duration getDeadLetters() {
            return deadLetters;
        }

        public void setDeadLetters(Duration deadLetters) {
            this.deadLetters = deadLetters;
        }
    }

    /** How a failed delivery is tried again. */
    public static class Retry {

        /** ON_IDLE (after min-idle), FIXED (after delay) or EXPONENTIAL (delay, times multiplier, up to max-delay). */
        private RetryKind policy = RetryKind.ON_IDLE;

        /** FIXED: the delay; EXPONENTIAL: the first delay. */
        private Duration delay = Duration.ofSeconds(1);

        /** EXPONENTIAL: the factor between two delays. */
        private double multiplier = 2;

        /** EXPONENTIAL: the longest delay. */
        private Duration maxDelay = Duration.ofSeconds(30);

        /** EXPONENTIAL: each delay is shortened by up to this fraction, 0 to 1. */
        private double jitter = 0.2;

        public RetryKind getPolicy() {
            return policy;
        }

        public void setPolicy(RetryKind policy) {
            this.policy = policy;
        }

        public Duration getDelay() {
            return delay;
        }

        public void setDelay(Duration delay) {
            this.delay = delay;
        }

        public double getMultiplier() {
            return multiplier;
        }

        public void setMultiplier(double multiplier) {
            this.multiplier = multiplier;
        }

        public Duration getMaxDelay() {
            return maxDelay;
        }

        public void setMaxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
        }

        public double getJitter() {
            return jitter;
        }

        public void setJitter(double jitter) {
            this.jitter = jitter;
        }
    }

    /** Where the bus's trace context goes through, if anywhere. */
    public enum TracingKind {
        OFF, GLOBAL, BEAN
    }

    /** The runbus health indicator. */
    public static class Health {

        /**
         * The longest a health check takes: past it the runbus component is DOWN, saying Redis did not answer in
         * time, and the check stops waiting (a stalled Redis never holds /actuator/health longer).
         */
        private Duration timeout = Duration.ofSeconds(2);

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }

    /** The retry policies a property can name. */
    public enum RetryKind {
        ON_IDLE, FIXED, EXPONENTIAL
    }

    /** Subscription options of every @RunbusListener (an annotation's own attributes win). */
    public static class Listener {

        /** Handlers running at once per listener. */
        private int concurrency = 8;

        /** Entries per read, and the most that wait locally for a free handler. */
        private int batchSize = 100;

        /** How long one read waits for new entries. */
        private Duration blockTime = Duration.ofSeconds(2);

        /**
         * How long an entry stays idle before another consumer may take it over (a running handler's entry is kept
         * alive, however long it runs).
         */
        private Duration minIdle = Duration.ofSeconds(30);

        /** Deliveries after which a failing entry goes to the dead-letter stream. */
        private int maxDeliveries = 3;

        /** How often the reclaimer looks for idle entries. */
        private Duration claimInterval = Duration.ofSeconds(5);

        /** How often a running handler's claim is refreshed; unset: the library's choice (at most min-idle / 2). */
        private Duration keepAliveInterval;

        /** How long a listener's stop waits for running handlers. */
        private Duration shutdownTimeout = Duration.ofSeconds(30);

        /** AFTER_WORK (at-least-once) or, opt-in for telemetry-like traffic, BEFORE_WORK (at-most-once). */
        private AckMode ackMode = AckMode.AFTER_WORK;

        /** Per-partition order: one consumer of the group owns a partition at a time and handles it in order. */
        private boolean ordered = false;

        /** Ordered only: how long a partition's lease lasts without renewal. */
        private Duration leaseTime = Duration.ofSeconds(10);

        private final Retry retry = new Retry();

        /** Flow control of every listener (docs/flow-control.md). */
        @NestedConfigurationProperty
        private final FlowProperties flow = new FlowProperties();

        public int getConcurrency() {
            return concurrency;
        }

        public void setConcurrency(int concurrency) {
            this.concurrency = concurrency;
        }

        public int getBatchSize() {
            return batchSize;
        }

        public void setBatchSize(int batchSize) {
            this.batchSize = batchSize;
        }

        public Duration getBlockTime() {
            return blockTime;
        }

        public void setBlockTime(Duration blockTime) {
            this.blockTime = blockTime;
        }

        public Duration getMinIdle() {
            return minIdle;
        }

        public void setMinIdle(Duration minIdle) {
            this.minIdle = minIdle;
        }

        public int getMaxDeliveries() {
            return maxDeliveries;
        }

        public void setMaxDeliveries(int maxDeliveries) {
            this.maxDeliveries = maxDeliveries;
        }

        public Duration getClaimInterval() {
            return claimInterval;
        }

        public void setClaimInterval(Duration claimInterval) {
            this.claimInterval = claimInterval;
        }

        public Duration getKeepAliveInterval() {
            return keepAliveInterval;
        }

        public void setKeepAliveInterval(Duration keepAliveInterval) {
            this.keepAliveInterval = keepAliveInterval;
        }

        public Duration getShutdownTimeout() {
            return shutdownTimeout;
        }

        public void setShutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = shutdownTimeout;
        }

        public AckMode getAckMode() {
            return ackMode;
        }

        public void setAckMode(AckMode ackMode) {
            this.ackMode = ackMode;
        }

        public boolean isOrdered() {
            return ordered;
        }

        public void setOrdered(boolean ordered) {
            this.ordered = ordered;
        }

        public Duration getLeaseTime() {
            return leaseTime;
        }

        public void setLeaseTime(Duration leaseTime) {
            this.leaseTime = leaseTime;
        }

        public Retry getRetry() {
            return retry;
        }

        public FlowProperties getFlow() {
            return flow;
        }
    }

    /** The runs layer on the application's DataSource. */
    public static class Runs {

        /** Whether to create the runs layer (needs runbus-runs and a DataSource). */
        private boolean enabled = false;

        /**
         * Whether the runs layer creates and upgrades its tables; false for a schema a migration tool builds from
         * RunsSchema.scripts (then the schema's version is checked at start).
         */
        private boolean migrate = true;

        /** PostgreSQL schema of the runs tables. */
        private String schema = "runbus";

        /** Topic that carries run triggers. */
        private String topic = "runs";

        /** Consumer group of the run workers. */
        private String group = "run-workers";

        /** Run handlers running at once in this process. */
        private int concurrency = 64;

        /** Attempts of a run before it is failed. */
        private int maxDeliveries = 3;

        /** Runs of one user execute one at a time, in submission order. */
        private boolean ordered = false;

        /** Whether the sweeper runs in this process beside the worker (it republishes runs whose trigger was lost). */
        private boolean sweeper = true;

        /**
         * Whether a scheduler of the recurring schedules runs in this process beside the worker (one process fires at
         * a time, whichever holds the lease).
         */
        private boolean scheduler = true;

        /** How often the sweeper runs. */
        private Duration sweepInterval = Duration.ofSeconds(30);

        /** An unfinished run untouched this long is examined by the sweeper. */
        private Duration sweepThreshold = Duration.ofMinutes(2);

        /** Runs examined per sweep. */
        private int sweepBatch = 500;

        /** How long a run's trigger stays idle before another worker may take it over (a running run's is kept alive). */
        private Duration minIdle = Duration.ofSeconds(30);

        /** How often the worker's reclaimer looks for idle triggers. */
        private Duration claimInterval = Duration.ofSeconds(5);

        /** Triggers per read, and the most that wait locally for a free run handler. */
        private int batchSize = 100;

        /** How long the worker's stop waits for running run handlers. */
        private Duration shutdownTimeout = Duration.ofSeconds(30);

        /**
         * How long a run handler may go on after it is told of its run's cancel (Runs.cancel) before its thread is
         * interrupted; 0 interrupts at once.
         */
        private Duration cancelGrace = Duration.ofSeconds(10);

        /**
         * How often the worker reads which of its running runs have a cancel request, besides the NOTIFY each cancel
         * sends.
         */
        private Duration cancelCheckInterval = Duration.ofSeconds(1);

        /**
         * How long one attempt's handler may run when its run sets no timeout of its own; then it is told to stop,
         * interrupted after the cancel grace, and the attempt fails. 0 for none.
         */
        private Duration executionTimeout = Duration.ofSeconds(0);

        /**
         * The longest Runs.list, get, replies and effects may take in PostgreSQL (statement_timeout for that read);
         * 0 for none.
         */
        private Duration readTimeout = Duration.ofSeconds(0);

        /** How often the run counts are read from PostgreSQL for the gauges (when a MeterRegistry is present). */
        private Duration meterRefreshInterval = Duration.ofSeconds(10);

        /** When a failed attempt is tried again; the runs layer's default is exponential from 1 s. */
        private final Retry retry = runsRetry();

        /** Flow control of the runs worker (docs/flow-control.md); give it to every process that submits runs too. */
        @NestedConfigurationProperty
        private final FlowProperties flow = new FlowProperties();

        private static Retry runsRetry() {
            Retry r = new Retry();
            r.setPolicy(RetryKind.EXPONENTIAL);
            return r;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public boolean isMigrate() {
            return migrate;
        }

        public void setMigrate(boolean migrate) {
            this.migrate = migrate;
        }

        public String getSchema() {
            return schema;
        }

        public void setSchema(String schema) {
            this.schema = schema;
        }

        public String getTopic() {
            return topic;
        }

        public void setTopic(String topic) {
            this.topic = topic;
        }

        public String getGroup() {
            return group;
        }

        public void setGroup(String group) {
            this.group = group;
        }

        public int getConcurrency() {
            return concurrency;
        }

        public void setConcurrency(int concurrency) {
            this.concurrency = concurrency;
        }

        public int getMaxDeliveries() {
            return maxDeliveries;
        }

        public void setMaxDeliveries(int maxDeliveries) {
            this.maxDeliveries = maxDeliveries;
        }

        public boolean isOrdered() {
            return ordered;
        }

        public void setOrdered(boolean ordered) {
            this.ordered = ordered;
        }

        public boolean isSweeper() {
            return sweeper;
        }

        public void setSweeper(boolean sweeper) {
            this.sweeper = sweeper;
        }

        public boolean isScheduler() {
            return scheduler;
        }

        public void setScheduler(boolean scheduler) {
            this.scheduler = scheduler;
        }

        public Duration getSweepInterval() {
            return sweepInterval;
        }

        public void setSweepInterval(Duration sweepInterval) {
            this.sweepInterval = sweepInterval;
        }

        public Duration getSweepThreshold() {
            return sweepThreshold;
        }

        public void setSweepThreshold(Duration sweepThreshold) {
            this.sweepThreshold = sweepThreshold;
        }

        public int getSweepBatch() {
            return sweepBatch;
        }

        public void setSweepBatch(int sweepBatch) {
            this.sweepBatch = sweepBatch;
        }

        public Retry getRetry() {
            return retry;
        }

        public FlowProperties getFlow() {
            return flow;
        }

        public Duration getMinIdle() {
            return minIdle;
        }

        public void setMinIdle(Duration minIdle) {
            this.minIdle = minIdle;
        }

        public Duration getClaimInterval() {
            return claimInterval;
        }

        public void setClaimInterval(Duration claimInterval) {
            this.claimInterval = claimInterval;
        }

        public int getBatchSize() {
            return batchSize;
        }

        public void setBatchSize(int batchSize) {
            this.batchSize = batchSize;
        }

        public Duration getShutdownTimeout() {
            return shutdownTimeout;
        }

        public void setShutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = shutdownTimeout;
        }

        public Duration getCancelGrace() {
            return cancelGrace;
        }

        public void setCancelGrace(Duration cancelGrace) {
            this.cancelGrace = cancelGrace;
        }

        public Duration getCancelCheckInterval() {
            return cancelCheckInterval;
        }

        public void setCancelCheckInterval(Duration cancelCheckInterval) {
            this.cancelCheckInterval = cancelCheckInterval;
        }

        public Duration getExecutionTimeout() {
            return executionTimeout;
        }

        public void setExecutionTimeout(Duration executionTimeout) {
            this.executionTimeout = executionTimeout;
        }

        public Duration getReadTimeout() {
            return readTimeout;
        }

        public void setReadTimeout(Duration readTimeout) {
            this.readTimeout = readTimeout;
        }

        public Duration getMeterRefreshInterval() {
            return meterRefreshInterval;
        }

        public void setMeterRefreshInterval(Duration meterRefreshInterval) {
            this.meterRefreshInterval = meterRefreshInterval;
        }
    }

    public String getRedisUrl() {
        return redisUrl;
    }

    public void setRedisUrl(String redisUrl) {
        this.redisUrl = redisUrl;
    }

    public String getKeyPrefix() {
        return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    public String getConsumer() {
        return consumer;
    }

    public void setConsumer(String consumer) {
        this.consumer = consumer;
    }

    public Duration getCommandTimeout() {
        return commandTimeout;
    }

    public void setCommandTimeout(Duration commandTimeout) {
        this.commandTimeout = commandTimeout;
    }

    public Duration getHeartbeatInterval() {
        return heartbeatInterval;
    }

    public void setHeartbeatInterval(Duration heartbeatInterval) {
        this.heartbeatInterval = heartbeatInterval;
    }

    public Duration getConsumerDeadAfter() {
        return consumerDeadAfter;
    }

    public void setConsumerDeadAfter(Duration consumerDeadAfter) {
        this.consumerDeadAfter = consumerDeadAfter;
    }

    public Duration getJanitorInterval() {
        return janitorInterval;
    }

    public void setJanitorInterval(Duration janitorInterval) {
        this.janitorInterval = janitorInterval;
    }

    public Duration getDelayPollInterval() {
        return delayPollInterval;
    }

    public void setDelayPollInterval(Duration delayPollInterval) {
        this.delayPollInterval = delayPollInterval;
    }

    public ScriptMode getScriptMode() {
        return scriptMode;
    }

    public void setScriptMode(ScriptMode scriptMode) {
        this.scriptMode = scriptMode;
    }

    public Map<String, Integer> getPartitions() {
        return partitions;
    }

    public void setPartitions(Map<String, Integer> partitions) {
        this.partitions = partitions;
    }

    public Duration getMeterRefreshInterval() {
        return meterRefreshInterval;
    }

    public void setMeterRefreshInterval(Duration meterRefreshInterval) {
        this.meterRefreshInterval = meterRefreshInterval;
    }

    public Path getRedisTlsCa() {
        return redisTlsCa;
    }

    public void setRedisTlsCa(Path redisTlsCa) {
        this.redisTlsCa = redisTlsCa;
    }

    public TracingKind getTracing() {
        return tracing;
    }

    public void setTracing(TracingKind tracing) {
        this.tracing = tracing;
    }

    public Health getHealth() {
        return health;
    }

    public Retention getRetention() {
        return retention;
    }

    public Listener getListener() {
        return listener;
    }

    public Runs getRuns() {
        return runs;
    }
}
