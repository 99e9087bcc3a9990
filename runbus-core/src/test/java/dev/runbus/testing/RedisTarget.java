package dev.runbus.testing;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.ArrayList;
import java.util.List;

/**
 * A real Redis server the behaviour suite runs against: the local Redis 7 (or RUNBUS_TEST_REDIS_URL), and
 * an embedded Redis 6.2 started once per test JVM, so that both XAUTOCLAIM reply shapes are exercised.
 */
public final class RedisTarget {

    private static volatile RedisTarget redis62;

    private final String name;
    private final String uri;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;

    private RedisTarget(String name, String uri) {
        this.name = name;
        this.uri = uri;
        this.client = RedisClient.create(uri);
        this.connection = client.connect();
    }

    /**
     * The Redis server of the machine (started by .ci/run when it is not answering), or, when nothing answers
     * at the test URL, a private one: see {@link TestServers#redisUri()}.
     */
    public static RedisTarget local() {
        return Holder.LOCAL;
    }

    /** An embedded Redis 6.2, started on a free port on first use and stopped when the JVM exits. */
    public static synchronized RedisTarget embedded62() {
        if (redis62 == null) {
            RedisServerProcess server = RedisServerProcess.startEmbedded62();
            Runtime.getRuntime().addShutdownHook(new Thread(server::close));
            redis62 = new RedisTarget("redis-6.2-embedded", server.uri());
        }
        return redis62;
    }

    public String name() {
        return name;
    }

    public String uri() {
        return uri;
    }

    /** Raw commands, for seeding and inspecting state the way a test needs to. */
    public RedisCommands<String, String> redis() {
        return connection.sync();
    }

    public String version() {
        for (String line : redis().info("server").split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                return line.substring("redis_version:".length()).trim();
            }
        }
        return "?";
    }

    /** Deletes every key under a prefix. */
    public void deleteKeys(String prefix) {
        List<String> found = new ArrayList<>();
        ScanIterator<String> it = ScanIterator.scan(redis(), ScanArgs.Builder.matches(prefix + ":*").limit(500));
        while (it.hasNext()) {
            found.add(it.next());
        }
        if (!found.isEmpty()) {
            redis().del(found.toArray(new String[0]));
        }
    }

    private static final class Holder {
        static final RedisTarget LOCAL = new RedisTarget("redis-local", TestServers.redisUri());
    }
}
