package dev.runbus.internal.redis;

import dev.runbus.BusConfig;
import dev.runbus.RedisCredentials;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisChannelWriter;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCredentialsProvider;
import io.lettuce.core.RedisReadOnlyException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.StatefulRedisConnectionImpl;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.DefaultEndpoint;
import io.lettuce.core.protocol.PushHandler;
import io.lettuce.core.protocol.RedisCommand;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bus's way to one Redis deployment: a single server, a server found through Sentinel, or a Redis Cluster
 * ({@link RedisUris} reads which from the URL). Everything above it speaks Lettuce's cluster-compatible command
 * interfaces, which both a plain and a cluster connection implement: on a cluster each command goes to the
 * master of its key's slot, following MOVED and ASK, and every runbus script touches keys of one hash tag.
 *
 * <p>A link owns its client; {@link #close} shuts it down with every connection opened through it.
 */
public abstract class RedisLink implements AutoCloseable {

    /** Keys and field names are text; values stay bytes, so payloads pass through unchanged. */
    public static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);

    private static final Logger log = LoggerFactory.getLogger(RedisLink.class);

    /**
     * Reconnect delays: from 10 ms doubling to at most 1 s. Lettuce's default grows to 30 s, which after a
     * failover can leave a connection waiting half a minute for a master that was promoted long before.
     */
    private static final Delay RECONNECT_DELAY = Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1),
            2, TimeUnit.MILLISECONDS);

    /**
     * A connection of its own for batches ({@link BatchConnection}). On one server a batch's commands are
     * flushed together ({@code flushTogether}). A cluster connection is not: a command for a node it has not
     * connected to yet is written when that connection is up, after the batch's flush, and would wait for the
     * next batch; each command is flushed as written instead, still pipelined.
     */
    public record Pipe(StatefulConnection<String, byte[]> connection, RedisClusterAsyncCommands<String, byte[]> async,
                       boolean flushTogether) {
    }

    /**
     * Reads {@code url} as {@link #open} will, connecting to nothing: {@link BusConfig} refuses a URL runbus cannot
     * read when it is built, not at connect.
     *
     * @throws IllegalArgumentException if the URL is not one runbus reads (the message never holds a password)
     */
    public static void checkUrl(String url) {
        RedisUris.parse(url);
    }

    /**
     * Opens a link to the deployment {@code url} names, with the URL's credentials and the JVM's trust store,
     * and checks the server's version.
     *
     * @throws IllegalArgumentException if the URL is not one runbus reads (the message never holds a password)
     * @throws dev.runbus.RunbusException if Redis cannot be reached or is too old
     */
    public static RedisLink open(String url, Duration commandTimeout) {
        return open(url, commandTimeout, null, null);
    }

    /** Opens a link as {@link BusConfig} says: its URL, command timeout, credentials and TLS trust. */
    public static RedisLink open(BusConfig config) {
        return open(config.redisUri(), config.commandTimeout(), config.redisCredentials(), config.redisTlsCa());
    }

    /**
     * @param credentials replace the URL's on every seed (and so on every node Lettuce derives from one: the
     *                    master behind Sentinels, the other cluster nodes); null keeps the URL's
     * @param tlsCa       PEM file of the CAs to trust for TLS; null: the JVM's trust store
     */
    static RedisLink open(String url, Duration commandTimeout, RedisCredentials credentials, Path tlsCa) {
        RedisUris.Target target = RedisUris.parse(url);
        for (RedisURI seed : target.seeds()) {
            seed.setTimeout(commandTimeout);
            if (credentials != null) {
                // A password alone replaces the URL's password and keeps the URL's user, if it names one.
                String user = credentials.user().orElse(userOf(seed));
                char[] password = credentials.password();
                if (user != null) {
                    seed.setAuthentication(user, password);
                } else {
                    seed.setAuthentication(password);
                }
            }
        }
        ClientResources resources = ClientResources.builder().reconnectDelay(RECONNECT_DELAY).build();
        SslOptions ssl = tlsCa == null ? null : SslOptions.builder().jdkSslProvider().trustManager(tlsCa.toFile()).build();
        RedisLink link = target.cluster() ? new Cluster(resources, target, ssl) : new Single(resources, target, ssl);
        try {
            link.shared = link.connect();
            link.version = RedisVersion.require(link.sync());
            return link;
        } catch (RuntimeException e) {
            link.close();
            if (e instanceof dev.runbus.RunbusException) {
                throw e;
            }
            throw new dev.runbus.RunbusException("cannot connect to Redis at " + target.where() + ": "
                    + TlsFailure.explain(e, tlsCa).orElseGet(() -> withRootCause(e)), e);
        }
    }

    /** The user a parsed URL names, or null. (Lettuce keeps a URL's credentials in a provider of a fixed value.) */
    private static String userOf(RedisURI uri) {
        RedisCredentialsProvider provider = uri.getCredentialsProvider();
        io.lettuce.core.RedisCredentials c = provider == null ? null
                : provider.resolveCredentials().block(Duration.ofSeconds(1));
        return c != null && c.hasUsername() ? c.getUsername() : null;
    }

    /**
     * Lettuce's "Unable to connect to host:port" with the reason found among its causes, which it does not
     * repeat: Redis's own error (WRONGPASS, NOAUTH) when there is one, else the deepest cause ("Connection
     * refused"). Lettuce can also report a refused handshake only as "Connection closed prematurely", when the
     * connection closes before the error is read.
     */
    private static String withRootCause(Throwable e) {
        Throwable root = e;
        for (Throwable t = e.getCause(); t != null && t != root; t = t.getCause()) {
            root = t;
            if (t instanceof io.lettuce.core.RedisCommandExecutionException) {
                break;
            }
        }
        String message = String.valueOf(e.getMessage());
        return root == e || root.getMessage() == null || message.contains(root.getMessage()) ? message
                : message + ": " + root.getMessage();
    }

    final ClientResources resources;
    final RedisUris.Target target;
    /** The shared connection, once {@link #connect} opened it. */
    private volatile StatefulConnection<String, byte[]> shared;
    /** The version of the server the link first reached. */
    private volatile RedisVersion version = RedisVersion.UNKNOWN;

    private RedisLink(ClientResources resources, RedisUris.Target target) {
        this.resources = resources;
        this.target = target;
    }

    /** Opens the shared connection. */
    abstract StatefulConnection<String, byte[]> connect();

    abstract io.lettuce.core.AbstractRedisClient client();

    /** The shared connection's commands; Lettuce pipelines what several threads send on it. */
    public abstract RedisClusterCommands<String, byte[]> sync();

    public abstract RedisClusterAsyncCommands<String, byte[]> async();

    /** Opens a connection for pipelined batches. */
    abstract Pipe openPipe();

    /** Opens a reader for one subscription's blocking reads. */
    public abstract StreamReader openReader(Duration timeout);

    /** Whether this is a Redis Cluster. */
    public abstract boolean cluster();

    /** The version of the server the link first reached (on a cluster: one of its nodes). */
    public RedisVersion version() {
        return version;
    }

    /**
     * A master of the deployment, by its address, with a connection to it alone, opened without waiting: a master that
     * does not answer holds up only who waits for it.
     */
    public record Master(String address, CompletableFuture<StatefulRedisConnection<String, byte[]>> connection) {

        /** The connection's commands, once it is open. */
        public RedisClusterCommands<String, byte[]> redis() {
            try {
                return connection.join().sync();
            } catch (java.util.concurrent.CompletionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : e;
            }
        }
    }

    /**
     * Every master, each on a connection of its own: what a function library is loaded on (replicas get it by
     * replication). One server: the server; a cluster: each master of its current topology.
     */
    public abstract java.util.List<Master> masters();

    /** Where the link goes, without credentials: for messages. */
    public String where() {
        return target.where();
    }

    /** Closes the shared connection and shuts the client down, with every connection opened through it. */
    @Override
    public void close() {
        if (shared != null) {
            shared.close();
        }
        client().shutdown();
        resources.shutdown();
    }

    /** One server, given directly or found through Sentinel (Lettuce asks the Sentinels again on each reconnect). */
    private static final class Single extends RedisLink {
        private final RedisClient client;
        private StatefulRedisConnection<String, byte[]> connection;

        Single(ClientResources resources, RedisUris.Target target, SslOptions ssl) {
            super(resources, target);
            this.client = target.seeds().get(0).getSentinels().isEmpty() ? RedisClient.create(resources)
                    : new SentinelClient(resources);
            ClientOptions.Builder options = ClientOptions.builder().autoReconnect(true);
            if (ssl != null) {
                options.sslOptions(ssl);
            }
            client.setOptions(options.build());
        }

        @Override
        StatefulConnection<String, byte[]> connect() {
            connection = client.connect(CODEC, target.seeds().get(0));
            return connection;
        }

        @Override
        io.lettuce.core.AbstractRedisClient client() {
            return client;
        }

        @Override
        public RedisClusterCommands<String, byte[]> sync() {
            return connection.sync();
        }

        @Override
        public RedisClusterAsyncCommands<String, byte[]> async() {
            return connection.async();
        }

        @Override
        Pipe openPipe() {
            StatefulRedisConnection<String, byte[]> c = ConnectRetries.open("a pipe's connection",
                    target.seeds().get(0).getTimeout(), () -> client.connect(CODEC, target.seeds().get(0)));
            return new Pipe(c, c.async(), true);
        }

        @Override
        public StreamReader openReader(Duration timeout) {
            StatefulRedisConnection<String, byte[]> c = ConnectRetries.open("a stream reader's connection", timeout,
                    () -> client.connect(CODEC, target.seeds().get(0)));
            c.setTimeout(timeout);
            return new ServerStreamReader(c, sync());
        }

        @Override
        public boolean cluster() {
            return false;
        }

        @Override
        public java.util.List<Master> masters() {
            return java.util.List.of(new Master(where(), CompletableFuture.completedFuture(connection)));
        }
    }

    /**
     * A client of a master found through Sentinel whose connections leave a server that answers {@code READONLY}.
     * Lettuce asks the Sentinels for the master on each (re)connect, but only then: a connection that reached a
     * master which was then made a replica without its clients being killed (an operator's {@code REPLICAOF}; or a
     * reconnect that asked a Sentinel not yet aware of a failover, and reached the old master after the Sentinels'
     * reconfiguration killed its clients) would stay on the replica, every write refused. A connection answered
     * {@code READONLY} is disconnected instead; Lettuce reconnects it, asking the Sentinels again, and re-sends the
     * commands that had no answer yet (those the replica refused did not run). While the Sentinels still name that
     * server, the next refusal does the same, at most once per {@value #READ_ONLY_RECONNECT_MILLIS} ms per
     * connection.
     */
    static final class SentinelClient extends RedisClient {

        static final long READ_ONLY_RECONNECT_MILLIS = 200;

        SentinelClient(ClientResources resources) {
            super(resources, new RedisURI()); // as RedisClient.create(resources): every connect names its URI
        }

        @Override
        protected <K, V> StatefulRedisConnectionImpl<K, V> newStatefulRedisConnection(RedisChannelWriter writer,
                PushHandler pushHandler, RedisCodec<K, V> codec, Duration timeout) {
            DefaultEndpoint endpoint = pushHandler instanceof DefaultEndpoint e ? e : null;
            AtomicLong lastReconnect = new AtomicLong(System.nanoTime()
                    - TimeUnit.MILLISECONDS.toNanos(READ_ONLY_RECONNECT_MILLIS));
            return new StatefulRedisConnectionImpl<>(writer, pushHandler, codec, timeout,
                    getOptions().getJsonParser()) {
                @Override
                public <T> RedisCommand<K, V, T> dispatch(RedisCommand<K, V, T> command) {
                    RedisCommand<K, V, T> sent = super.dispatch(command);
                    watch(command);
                    return sent;
                }

                @Override
                public Collection<RedisCommand<K, V, ?>> dispatch(
                        Collection<? extends RedisCommand<K, V, ?>> commands) {
                    Collection<RedisCommand<K, V, ?>> sent = super.dispatch(commands);
                    commands.forEach(this::watch);
                    return sent;
                }

                private void watch(RedisCommand<K, V, ?> command) {
                    if (endpoint != null && command instanceof CompletionStage<?> reply) {
                        reply.whenComplete((v, failure) -> {
                            if (readOnly(failure)) {
                                reconnect(endpoint, lastReconnect);
                            }
                        });
                    }
                }
            };
        }

        /**
         * A write refused by a replica: Lettuce's exception for the reply, or (Redis 6.2, which runs a script on a
         * replica and refuses its first write inside) a script's error that quotes it.
         */
        static boolean readOnly(Throwable failure) {
            return failure instanceof RedisReadOnlyException
                    || failure instanceof io.lettuce.core.RedisCommandExecutionException
                    && String.valueOf(failure.getMessage()).contains("READONLY You can't write against a read only");
        }

        private static void reconnect(DefaultEndpoint endpoint, AtomicLong last) {
            long now = System.nanoTime();
            long before = last.get();
            if (now - before >= TimeUnit.MILLISECONDS.toNanos(READ_ONLY_RECONNECT_MILLIS)
                    && last.compareAndSet(before, now)) {
                log.warn("Redis answered READONLY: the server this connection reached is a replica now; reconnecting"
                        + " to the master the Sentinels name");
                endpoint.disconnect();
            }
        }
    }

    /**
     * A Redis Cluster: the topology is read from the seeds, refreshed every 5 s and at once when a command
     * meets MOVED, ASK, a slot nobody serves or a node that keeps refusing connections (a dead master).
     */
    private static final class Cluster extends RedisLink {
        /** The least time between two topology refreshes that a failure asks for, Lettuce's and the readers'. */
        private static final Duration REFRESH_AT_MOST_EVERY = Duration.ofMillis(500);

        private final RedisClusterClient client;
        private StatefulRedisClusterConnection<String, byte[]> connection;
        /** The readers' refreshes, one link's together: at most one on its way, and one per interval. */
        private final TopologyRefresh readersRefresh;

        Cluster(ClientResources resources, RedisUris.Target target, SslOptions ssl) {
            super(resources, target);
            this.client = RedisClusterClient.create(resources, target.seeds());
            ClusterClientOptions.Builder options = ClusterClientOptions.builder();
            if (ssl != null) {
                options.sslOptions(ssl);
            }
            client.setOptions(options
                    .autoReconnect(true)
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enablePeriodicRefresh(Duration.ofSeconds(5))
                            .enableAllAdaptiveRefreshTriggers()
                            .adaptiveRefreshTriggersTimeout(REFRESH_AT_MOST_EVERY)
                            .refreshTriggersReconnectAttempts(2)
                            .build())
                    // A node the cluster has agreed is failed (or that has no address) leaves the topology, so its
                    // connection is closed as stale and the commands queued on it fail at once, to be retried on
                    // the new master, instead of waiting out the command timeout for a node that is gone.
                    .nodeFilter(node -> !node.is(RedisClusterNode.NodeFlag.FAIL)
                            && !node.is(RedisClusterNode.NodeFlag.NOADDR))
                    .build());
            this.readersRefresh = new TopologyRefresh(client::refreshPartitionsAsync, REFRESH_AT_MOST_EVERY.toNanos(),
                    System::nanoTime);
        }

        @Override
        StatefulConnection<String, byte[]> connect() {
            connection = client.connect(CODEC);
            return connection;
        }

        @Override
        io.lettuce.core.AbstractRedisClient client() {
            return client;
        }

        @Override
        public RedisClusterCommands<String, byte[]> sync() {
            return connection.sync();
        }

        @Override
        public RedisClusterAsyncCommands<String, byte[]> async() {
            return connection.async();
        }

        @Override
        Pipe openPipe() {
            StatefulRedisClusterConnection<String, byte[]> c = ConnectRetries.open("a pipe's connection",
                    target.seeds().get(0).getTimeout(), () -> client.connect(CODEC));
            return new Pipe(c, c.async(), false);
        }

        @Override
        public StreamReader openReader(Duration timeout) {
            StatefulRedisClusterConnection<String, byte[]> c = ConnectRetries.open("a stream reader's connection",
                    timeout, () -> client.connect(CODEC));
            c.setTimeout(timeout);
            // Asked without waiting: a refresh asks every node, and one that stopped answering would hold up the
            // reader for its connect timeout (docs/architecture.md, rule 14). Coalesced: a reader asks after every
            // failed read, which is every read while a master is marked failed without a replacement.
            return new ClusterStreamReader(c, connection, readersRefresh,
                    target.seeds().get(0).getTimeout());
        }

        @Override
        public boolean cluster() {
            return true;
        }

        @Override
        public java.util.List<Master> masters() {
            java.util.List<Master> out = new java.util.ArrayList<>();
            for (RedisClusterNode node : connection.getPartitions()) {
                if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                    out.add(new Master(node.getUri().getHost() + ":" + node.getUri().getPort(),
                            connection.getConnectionAsync(node.getNodeId())));
                }
            }
            return out;
        }
    }
}
