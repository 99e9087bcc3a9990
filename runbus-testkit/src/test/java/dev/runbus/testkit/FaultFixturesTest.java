package dev.runbus.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The fault fixtures other tests rely on do what they say, against a real redis-server. */
class FaultFixturesTest {

    private static StatefulRedisConnection<String, String> connect(RedisClient client, String uri, Duration timeout) {
        RedisURI u = RedisURI.create(uri);
        u.setTimeout(timeout);
        return client.connect(u);
    }

    /** Waits until the connection answers PING again (it may be reconnecting meanwhile). */
    private static void awaitPong(StatefulRedisConnection<String, String> c, String what) {
        Wait.until(what, Duration.ofSeconds(10), () -> {
            try {
                return "PONG".equals(c.sync().ping());
            } catch (RuntimeException notYet) {
                return false;
            }
        });
    }

    @Test
    void restart_losesTheDataAndKeepsThePort() {
        try (RedisServerProcess server = RedisServerProcess.start()) {
            RedisClient client = RedisClient.create();
            try (StatefulRedisConnection<String, String> c = connect(client, server.uri(), Duration.ofSeconds(5))) {
                c.sync().set("k", "v");
                server.restart();
                Wait.until("the restarted server answers", Duration.ofSeconds(20), () -> {
                    try {
                        return c.sync().dbsize() == 0;
                    } catch (RuntimeException reconnecting) {
                        return false;
                    }
                });
                assertThat(c.sync().get("k")).isNull();
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void pause_makesCommandsTimeOutUntilResumed() {
        try (RedisServerProcess server = RedisServerProcess.start()) {
            RedisClient client = RedisClient.create();
            try (StatefulRedisConnection<String, String> c = connect(client, server.uri(), Duration.ofSeconds(5))) {
                // Short only once connected: the handshake with a server just started, on a loaded machine, may take
                // longer than the timeout the paused commands are checked against.
                c.setTimeout(Duration.ofMillis(300));
                server.pause();
                assertThatThrownBy(() -> c.sync().ping()).isInstanceOf(RedisCommandTimeoutException.class);
                server.resume();
                awaitPong(c, "PONG after resume");
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void proxy_swallowedRepliesStillReachTheServer_andDroppedConnectionsReconnect() {
        RedisTarget redis = RedisTarget.local();
        java.net.URI target = java.net.URI.create(redis.uri());
        String key = "fixtures-" + java.util.UUID.randomUUID();
        try (TcpProxy proxy = TcpProxy.start(target.getHost(), target.getPort())) {
            RedisClient client = RedisClient.create();
            try (StatefulRedisConnection<String, String> c = connect(client, proxy.uri(), Duration.ofMillis(500))) {
                assertThat(c.sync().ping()).isEqualTo("PONG");
                proxy.swallowReplies(true);
                assertThatThrownBy(() -> c.sync().set(key, "written"))
                        .isInstanceOf(RedisCommandTimeoutException.class);
                assertThat(redis.redis().get(key)).isEqualTo("written");
                proxy.swallowReplies(false);
                proxy.dropConnections();
                awaitPong(c, "a reconnected PING");
            } finally {
                client.shutdown();
                redis.redis().del(key);
            }
        }
    }

    /**
     * A client that reconnects after the drop and re-sends at once is answered, even before the test turns the
     * swallowing off: the replies were lost with the old connection (a global flag swallowed the re-sent command's
     * reply when the reconnect came between the drop and {@code swallowReplies(false)}).
     */
    @Test
    void proxy_aDropEndsTheSwallowing_theNewConnectionIsAnswered() {
        RedisTarget redis = RedisTarget.local();
        String key = "fixtures-" + java.util.UUID.randomUUID();
        try (TcpProxy proxy = TcpProxy.before(redis.uri())) {
            RedisClient client = RedisClient.create();
            try (StatefulRedisConnection<String, String> c = connect(client, proxy.uri(), Duration.ofMillis(500))) {
                assertThat(c.sync().ping()).isEqualTo("PONG");
                proxy.swallowReplies(true);
                assertThatThrownBy(() -> c.sync().set(key, "written"))
                        .isInstanceOf(RedisCommandTimeoutException.class);
                proxy.dropConnections();
                awaitPong(c, "a PING on the connection opened after the drop");
                c.setTimeout(Duration.ofSeconds(5));
                assertThat(c.sync().get(key)).isEqualTo("written");
            } finally {
                client.shutdown();
                redis.redis().del(key);
            }
        }
    }

    @Test
    void proxy_swallowsRepliesFromTheFirstRequestNamingTheMarker() {
        RedisTarget redis = RedisTarget.local();
        String before = "fixtures-" + java.util.UUID.randomUUID();
        String marked = before + "-marked";
        try (TcpProxy proxy = TcpProxy.before(redis.uri())) {
            RedisClient client = RedisClient.create();
            try (StatefulRedisConnection<String, String> c = connect(client, proxy.uri(), Duration.ofSeconds(5))) {
                proxy.swallowRepliesFrom(marked);
                assertThat(c.sync().set(before, "answered")).isEqualTo("OK");
                c.setTimeout(Duration.ofMillis(500));
                assertThatThrownBy(() -> c.sync().set(marked, "written"))
                        .isInstanceOf(RedisCommandTimeoutException.class);
                assertThat(redis.redis().get(marked)).isEqualTo("written");
                assertThatThrownBy(() -> c.sync().get(before)).as("swallowing goes on")
                        .isInstanceOf(RedisCommandTimeoutException.class);
                proxy.swallowReplies(false);
                proxy.dropConnections();
                awaitPong(c, "a reconnected PING");
            } finally {
                client.shutdown();
                redis.redis().del(before, marked);
            }
        }
    }

    @Test
    void proxy_holdsTheRepliesOfTheConnectionThatSentACommand_whichRunsMeanwhile() {
        RedisTarget redis = RedisTarget.local();
        String key = "fixtures-" + java.util.UUID.randomUUID();
        try (TcpProxy proxy = TcpProxy.before(redis.uri())) {
            RedisClient client = RedisClient.create();
            try (StatefulRedisConnection<String, String> held = connect(client, proxy.uri(), Duration.ofSeconds(5));
                 StatefulRedisConnection<String, String> other = connect(client, proxy.uri(), Duration.ofSeconds(5))) {
                proxy.holdRepliesFrom(command -> command.get(0).equals("INCR"));
                var reply = held.async().incr(key);
                Wait.until("the command ran", Duration.ofSeconds(10), () -> "1".equals(redis.redis().get(key)));
                assertThat(other.sync().ping()).as("another connection").isEqualTo("PONG");
                assertThat(other.sync().incr(key)).as("the same command on another connection, not held").isEqualTo(2);
                assertThat(reply.isDone()).as("the held reply").isFalse();
                assertThat(proxy.matchedCommands()).isEqualTo(2);
                proxy.releaseReplies();
                Wait.until("the held reply", Duration.ofSeconds(10), reply::isDone);
                assertThat(held.sync().incr(key)).isEqualTo(3);
            } finally {
                client.shutdown();
                redis.redis().del(key);
            }
        }
    }
}
