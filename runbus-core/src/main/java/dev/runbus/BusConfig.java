package dev.runbus;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * How a {@link Bus} connects and keeps its consumers tidy. Immutable; build with {@link #builder(String)}.
 *
 * @param redisUri           Redis URL: {@code redis://[[user:]password@]host[:port][/db]} ({@code rediss://} for
 *                           TLS); through Sentinel, {@code redis-sentinel://host:port[,host:port…][/db]#master};
 *                           a Redis Cluster, {@code redis-cluster://host:port[,host:port…]} ({@code
 *                           rediss-cluster://} for TLS), any of its nodes as seeds
 *                           ({@code rediss://} for TLS, {@code redis://:password@host}) — required
 * @param keyPrefix          first part of every Redis key the bus writes; default {@value #DEFAULT_KEY_PREFIX}; no
 *                           whitespace, braces, glob characters or colon ({@link KeyPrefix#check})
 * @param commandTimeout     how long one Redis command may take before it fails; default 10 s
 * @param heartbeatInterval  how often each consumer records that it is alive; default 5 s
 * @param consumerDeadAfter  a consumer silent this long counts as dead, and the janitor may delete it
 *                           once its PEL is empty; default 10 min
 * @param janitorInterval    how often the janitor looks for dead consumers; default 1 min
 * @param listener           called on dead letters, trimmed entries and loop errors; default: none
 * @param partitions         partition count per topic, for topics with more than one; a topic not named here
 *                           has 1 partition (one stream, the layout of a plain topic). A topic's count is
 *                           recorded in Redis when the topic is first used, and a bus configured with another
 *                           count for it fails with a clear error instead of hashing keys onto other
 *                           partitions; see {@link Partitioner}. Default: none
 * @param retention          whether this bus trims the streams of the topics it subscribes to (every partition of
 *                           each): each stream down to the oldest entry one of its consumer groups still needs —
 *                           pending (delivered, not acknowledged) or not yet read — and never an entry younger
 *                           than {@code retentionAge}. A stream without groups is not trimmed. Default: on;
 *                           {@code Builder.retention(false)} turns it off (then streams grow until a publisher's
 *                           lossy {@link PublishOptions} cap or an operator trims them)
 * @param retentionAge       entries younger than this are kept even when every group is done with them (for
 *                           replays, inspection, a group added late); {@link Duration#ZERO} trims as soon as every
 *                           group is done. Measured on the Redis server's clock. Default 1 hour
 * @param retentionKeepLast  the newest entries of each partition stream retention keeps whatever their age, even
 *                           when every group is done with them (a length floor beside {@code retentionAge}),
 *                           0 to {@value #MAX_RETENTION_KEEP_LAST}. Default 0
 * @param retentionInterval  how often retention runs; every bus may run it at once (it is idempotent).
 *                           Default 30 s
 * @param deadLetterRetention dead letters older than this are trimmed from the dead-letter streams of the topics
 *                           this bus subscribes to (Redis clock), on the retention schedule, even when retention
 *                           is off. Opt-in: null (the default) keeps dead letters until an operator purges them,
 *                           since a dead letter is often the only copy of a message left
 * @param delayPollInterval  how often, at most, the delay mover looks at a delay set it believes has nothing due
 *                           (for the topics this bus subscribes to): the bound on how late an entry scheduled by
 *                           another process with a shorter delay than this can be moved into its stream. Entries
 *                           scheduled through this bus, and those the mover already knows of, are moved when due.
 *                           Default 100 ms
 * @param clock              the clock for the times the bus records on the client side (a dead letter's time).
 *                           Due times of delayed entries and retries never use it: they are kept on the Redis
 *                           server's clock. Default {@link Clock#systemUTC()}
 * @param redisCredentials   the Redis user and password, given apart from the URL; when set they replace the
 *                           URL's (a password without a user keeps the URL's user, if it names one) on every Redis
 *                           server the bus connects to (the single server, every cluster
 *                           node, the master and replicas found through Sentinel), never sent to the Sentinels
 *                           themselves. Default null: the URL's, if any
 * @param redisTlsCa         a PEM file of the CA certificates that sign the Redis servers' certificates, for a TLS
 *                           URL ({@code rediss://}, {@code rediss-cluster://}); the servers' certificates are still
 *                           checked against the host name connected to. Default null: the JVM's trust store
 * @param scriptMode         how the bus runs its Lua scripts: {@link ScriptMode#AUTO} (the default) calls them as a
 *                           Redis function library (FCALL) on Redis 7 and later and Valkey, and sends them with
 *                           EVALSHA/EVAL on Redis 6.2; {@link ScriptMode#EVAL} always sends them;
 *                           {@link ScriptMode#FUNCTIONS} always calls the library, and refuses a server without
 *                           functions at connect. Functions let the Redis users drop {@code +eval +evalsha}
 *                           (docs/security.md)
 * @param tracing            OpenTelemetry trace context on publishes and deliveries ({@link Tracing}); default
 *                           {@link Tracing#OFF}, which loads no OpenTelemetry class and costs nothing
 * @param meterRegistry      a Micrometer {@code io.micrometer.core.instrument.MeterRegistry} the bus registers its
 *                           meters with (docs/metrics.md). Typed {@code Object} here so that a bus without one never
 *                           loads a Micrometer class: {@code micrometer-core} is an optional dependency, needed only
 *                           by those who set this. Default null: no meters
 * @param unpatchedServerWarning whether {@code Bus.connect} logs a WARN when the server is older than the release
 *                           of its line that fixes the Lua CVEs of October 2025 (docs/security.md). Default true;
 *                           false only for a server whose scripting no one but this process can reach, such as the
 *                           embedded Redis {@code runbus serve} starts behind a password it made itself
 * @param meterRefreshInterval how often the gauges that need Redis (stream length, pending, lag, dead-letter and
 *                           delay-set depth) are read, on a thread of their own, for the topics this bus subscribes
 *                           to; a scrape reads the last values and never waits for Redis. Default 10 s
 */
public record BusConfig(String redisUri, String keyPrefix, Duration commandTimeout, Duration heartbeatInterval,
                        Duration consumerDeadAfter, Duration janitorInterval, BusListener listener,
                        Map<String, Integer> partitions, boolean retention, Duration retentionAge,
                        int retentionKeepLast, Duration retentionInterval, Duration deadLetterRetention,
                        Duration delayPollInterval, Clock clock, RedisCredentials redisCredentials,
                        Path redisTlsCa, ScriptMode scriptMode, Tracing tracing, Object meterRegistry,
                        Duration meterRefreshInterval, boolean unpatchedServerWarning) {

    public static final String DEFAULT_KEY_PREFIX = "runbus";
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_HEARTBEAT_INTERVAL = Duration.ofSeconds(5);
    public static final Duration DEFAULT_CONSUMER_DEAD_AFTER = Duration.ofMinutes(10);
    public static final Duration DEFAULT_JANITOR_INTERVAL = Duration.ofMinutes(1);
    public static final Duration DEFAULT_DELAY_POLL_INTERVAL = Duration.ofMillis(100);
    public static final int MAX_RETENTION_KEEP_LAST = 10_000;
    public static final Duration DEFAULT_RETENTION_AGE = Duration.ofHours(1);
    public static final Duration DEFAULT_RETENTION_INTERVAL = Duration.ofSeconds(30);
    public static final ScriptMode DEFAULT_SCRIPT_MODE = ScriptMode.AUTO;
    public static final Duration DEFAULT_METER_REFRESH_INTERVAL = Duration.ofSeconds(10);
    private static final String METER_REGISTRY = "io.micrometer.core.instrument.MeterRegistry";

    public BusConfig {
        Objects.requireNonNull(redisUri, "redisUri");
        if (redisUri.isBlank()) {
            throw new IllegalArgumentException("redisUri must not be blank");
        }
        dev.runbus.internal.redis.RedisLink.checkUrl(redisUri);
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        KeyPrefix.check(keyPrefix);
        for (var d : new Object[][] {{"commandTimeout", commandTimeout}, {"heartbeatInterval", heartbeatInterval},
                {"consumerDeadAfter", consumerDeadAfter}, {"janitorInterval", janitorInterval},
                {"retentionInterval", retentionInterval}, {"delayPollInterval", delayPollInterval},
                {"meterRefreshInterval", meterRefreshInterval}}) {
            Duration value = (Duration) Objects.requireNonNull(d[1], (String) d[0]);
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(d[0] + " must be positive, got " + value);
            }
        }
        if (consumerDeadAfter.compareTo(heartbeatInterval.multipliedBy(3)) < 0) {
            throw new IllegalArgumentException("consumerDeadAfter (" + consumerDeadAfter
                    + ") must be at least three heartbeat intervals (" + heartbeatInterval.multipliedBy(3) + ")");
        }
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(partitions, "partitions");
        partitions.forEach((topic, count) -> {
            dev.runbus.internal.redis.Keys.checkTopic(topic);
            try {
                Partitioner.checkCount(count);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("topic " + topic + ": " + e.getMessage(), e);
            }
        });
        partitions = Map.copyOf(partitions);
        Objects.requireNonNull(retentionAge, "retentionAge");
        // A retention round over a backlog longer than twice retentionKeepLast reads the newest that many entries
        // (payloads included) to find where they start: the bound keeps that round's cost bounded.
        if (retentionKeepLast < 0 || retentionKeepLast > MAX_RETENTION_KEEP_LAST) {
            throw new IllegalArgumentException("retentionKeepLast must be between 0 and " + MAX_RETENTION_KEEP_LAST
                    + ", got " + retentionKeepLast);
        }
        requireMillis("retentionAge", retentionAge);
        if (deadLetterRetention != null) {
            requireMillis("deadLetterRetention", deadLetterRetention);
        }
        if (retentionAge.isNegative()) {
            throw new IllegalArgumentException("retentionAge must not be negative, got " + retentionAge);
        }
        if (deadLetterRetention != null && (deadLetterRetention.isNegative() || deadLetterRetention.isZero())) {
            throw new IllegalArgumentException("deadLetterRetention must be positive (or null: keep dead letters), got "
                    + deadLetterRetention);
        }
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(scriptMode, "scriptMode");
        Objects.requireNonNull(tracing, "tracing");
        if (meterRegistry != null && !isMeterRegistry(meterRegistry.getClass())) {
            throw new IllegalArgumentException("meterRegistry must be a " + METER_REGISTRY + ", got "
                    + meterRegistry.getClass().getName());
        }
        if (redisTlsCa != null) {
            if (!redisUri.regionMatches(true, 0, "rediss", 0, "rediss".length())) {
                throw new IllegalArgumentException("redisTlsCa is set, but the Redis URL does not use TLS: use rediss:// or"
                        + " rediss-cluster:// (" + Secrets.mask(redisUri) + ")");
            }
            if (!Files.isRegularFile(redisTlsCa) || !Files.isReadable(redisTlsCa)) {
                throw new IllegalArgumentException("redisTlsCa: cannot read the PEM file " + redisTlsCa);
            }
        }
    }

    /** Like the record's own, with the URL's password masked (and the credentials' never shown). */
    @Override
    public String toString() {
        return "BusConfig[redisUri=" + Secrets.mask(redisUri) + ", keyPrefix=" + keyPrefix + ", commandTimeout="
                + commandTimeout + ", heartbeatInterval=" + heartbeatInterval + ", consumerDeadAfter="
                + consumerDeadAfter + ", janitorInterval=" + janitorInterval + ", listener=" + listener
                + ", partitions=" + partitions + ", retention=" + retention + ", retentionAge=" + retentionAge
                + ", retentionKeepLast=" + retentionKeepLast + ", retentionInterval=" + retentionInterval
                + ", deadLetterRetention=" + deadLetterRetention + ", delayPollInterval=" + delayPollInterval
                + ", clock=" + clock + ", redisCredentials=" + redisCredentials + ", redisTlsCa=" + redisTlsCa
                + ", scriptMode=" + scriptMode + ", tracing=" + tracing
                + ", meterRegistry=" + (meterRegistry == null ? null : meterRegistry.getClass().getName())
                + ", meterRefreshInterval=" + meterRefreshInterval + ", unpatchedServerWarning="
                + unpatchedServerWarning + "]";
    }

    /** By name, so that the check loads no Micrometer class. */
    private static boolean isMeterRegistry(Class<?> c) {
        for (; c != null; c = c.getSuperclass()) {
            if (c.getName().equals(METER_REGISTRY)) {
                return true;
            }
        }
        return false;
    }

    /** A duration the bus hands Redis in milliseconds: one that does not fit is refused by name. */
    private static void requireMillis(String name, Duration d) {
        try {
            d.toMillis();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(name + " is too long: " + d);
        }
    }

    /** How many partitions {@code topic} has in this configuration: 1 unless {@link #partitions} says otherwise. */
    public int partitionsOf(String topic) {
        return partitions.getOrDefault(topic, 1);
    }

    public static Builder builder(String redisUri) {
        return new Builder(redisUri);
    }

    /** Builder for {@link BusConfig}; unset options take the {@code DEFAULT_*} values. */
    public static final class Builder {
        private final String redisUri;
        private String keyPrefix = DEFAULT_KEY_PREFIX;
        private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
        private Duration heartbeatInterval = DEFAULT_HEARTBEAT_INTERVAL;
        private Duration consumerDeadAfter = DEFAULT_CONSUMER_DEAD_AFTER;
        private Duration janitorInterval = DEFAULT_JANITOR_INTERVAL;
        private BusListener listener = BusListener.NONE;
        private final Map<String, Integer> partitions = new TreeMap<>();
        private boolean retention = true;
        private Duration retentionAge = DEFAULT_RETENTION_AGE;
        private int retentionKeepLast;
        private Duration retentionInterval = DEFAULT_RETENTION_INTERVAL;
        private Duration deadLetterRetention;
        private Duration delayPollInterval = DEFAULT_DELAY_POLL_INTERVAL;
        private Clock clock = Clock.systemUTC();
        private RedisCredentials redisCredentials;
        private Path redisTlsCa;
        private ScriptMode scriptMode = DEFAULT_SCRIPT_MODE;
        private Tracing tracing = Tracing.OFF;
        private Object meterRegistry;
        private Duration meterRefreshInterval = DEFAULT_METER_REFRESH_INTERVAL;
        private boolean unpatchedServerWarning = true;

        private Builder(String redisUri) {
            this.redisUri = redisUri;
        }

        public Builder keyPrefix(String v) {
            keyPrefix = v;
            return this;
        }

        public Builder commandTimeout(Duration v) {
            commandTimeout = v;
            return this;
        }

        public Builder heartbeatInterval(Duration v) {
            heartbeatInterval = v;
            return this;
        }

        public Builder consumerDeadAfter(Duration v) {
            consumerDeadAfter = v;
            return this;
        }

        public Builder janitorInterval(Duration v) {
            janitorInterval = v;
            return this;
        }

        public Builder listener(BusListener v) {
            listener = v;
            return this;
        }

        /** Gives {@code topic} {@code count} partitions (1 to {@value Partitioner#MAX_PARTITIONS}). */
        public Builder partitions(String topic, int count) {
            partitions.put(Objects.requireNonNull(topic, "topic"), count);
            return this;
        }

        /** Whether this bus trims the streams of its topics; default on. */
        public Builder retention(boolean v) {
            retention = v;
            return this;
        }

        public Builder retentionAge(Duration v) {
            retentionAge = v;
            return this;
        }

        /** Default 0; see {@link BusConfig#retentionKeepLast()}. */
        public Builder retentionKeepLast(int v) {
            retentionKeepLast = v;
            return this;
        }

        public Builder retentionInterval(Duration v) {
            retentionInterval = v;
            return this;
        }

        /** Trims dead letters older than {@code v}; null (the default) keeps them. */
        public Builder deadLetterRetention(Duration v) {
            deadLetterRetention = v;
            return this;
        }

        public Builder delayPollInterval(Duration v) {
            delayPollInterval = v;
            return this;
        }

        public Builder clock(Clock v) {
            clock = v;
            return this;
        }

        /** The password of Redis's {@code default} user, replacing the URL's; see {@link BusConfig#redisCredentials()}. */
        public Builder redisPassword(char[] password) {
            redisCredentials = RedisCredentials.password(password);
            return this;
        }

        /** A Redis ACL user and password, replacing the URL's; see {@link BusConfig#redisCredentials()}. */
        public Builder redisCredentials(RedisCredentials v) {
            redisCredentials = v;
            return this;
        }

        /** The CA certificates (PEM) to trust for {@code rediss://}; default: the JVM's trust store. */
        public Builder redisTlsCa(Path pemFile) {
            redisTlsCa = pemFile;
            return this;
        }

        /** How the bus runs its scripts; default {@link ScriptMode#AUTO}. See {@link BusConfig#scriptMode()}. */
        public Builder scriptMode(ScriptMode v) {
            scriptMode = v;
            return this;
        }

        /** Trace context through OpenTelemetry; default {@link Tracing#OFF}. */
        public Builder tracing(Tracing v) {
            tracing = v;
            return this;
        }

        /**
         * Registers the bus's meters with {@code registry}, an {@code io.micrometer.core.instrument.MeterRegistry}
         * (docs/metrics.md); default none. Typed {@code Object}, as HikariCP's {@code setMetricRegistry}: a method
         * naming a Micrometer type would make reflection over this builder (a configuration binder listing its
         * methods) fail on a classpath without Micrometer. Anything else is refused at {@link #build()}.
         */
        public Builder meterRegistry(Object registry) {
            meterRegistry = registry;
            return this;
        }

        /** How often the gauges that need Redis are read; default 10 s. */
        public Builder meterRefreshInterval(Duration v) {
            meterRefreshInterval = v;
            return this;
        }

        /**
         * Whether connecting to a server older than its line's fixed release of the October 2025 Lua CVEs logs a
         * WARN; default true. See {@link BusConfig#unpatchedServerWarning()}.
         */
        public Builder unpatchedServerWarning(boolean v) {
            unpatchedServerWarning = v;
            return this;
        }

        public BusConfig build() {
            return new BusConfig(redisUri, keyPrefix, commandTimeout, heartbeatInterval, consumerDeadAfter,
                    janitorInterval, listener, partitions, retention, retentionAge, retentionKeepLast,
                    retentionInterval, deadLetterRetention, delayPollInterval, clock, redisCredentials, redisTlsCa,
                    scriptMode, tracing, meterRegistry, meterRefreshInterval, unpatchedServerWarning);
        }
    }
}
