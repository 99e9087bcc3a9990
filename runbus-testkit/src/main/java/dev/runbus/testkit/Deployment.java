package dev.runbus.testkit;

import java.util.function.Supplier;

/**
 * A Redis deployment a test class runs on ({@link OnDeployments}): where its shared target is and which binary its
 * own servers run. Another deployment is one more constant here and its name in the classes that should run on it.
 */
public enum Deployment {

    /** The machine's Redis, or the tests' own when nothing answers at the test URL ({@link TestServers}). */
    LOCAL(RedisTarget::local, RedisServerProcess::start),
    /** The Redis 6.2 inside the embedded-redis artifact: XAUTOCLAIM's two-element reply, no functions. */
    REDIS_62(RedisTarget::embedded62, RedisServerProcess::startEmbedded62),
    /** A cluster of 3 masters and 3 replicas, through {@code redis-cluster://}. */
    CLUSTER(RedisTarget::cluster, RedisServerProcess::start),
    /** A master with a replica, found through 3 Sentinels ({@code redis-sentinel://…#runbus}). */
    SENTINEL(RedisTarget::sentinel, RedisServerProcess::start);

    private final Supplier<RedisTarget> target;
    private final Supplier<RedisServerProcess> server;

    Deployment(Supplier<RedisTarget> target, Supplier<RedisServerProcess> server) {
        this.target = target;
        this.server = server;
    }

    /** The deployment's shared servers, started on first use and stopped when the JVM exits. */
    public RedisTarget target() {
        return target.get();
    }

    /**
     * A server of a test's own, for tests that restart, pause or flush one: of this deployment's version (a cluster
     * or Sentinel deployment's own server is a single installed {@code redis-server}).
     */
    public RedisServerProcess startServer() {
        return server.get();
    }

    /** {@link #startServer()} with a connection to it. */
    public OwnRedis ownRedis() {
        return OwnRedis.of(startServer());
    }
}
