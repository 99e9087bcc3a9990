package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.Wait;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Redis host's clock steps (libfaketime preloaded into the server, its offset read from a file on every call):
 * what a step can do to an ordered group's leases, and what it cannot. A forward step past a lease's end ends it
 * while its holder still works: the entry it was running is fenced (its ack refused) and runs again, first, under
 * a lease with a higher fencing token (the bound docs/architecture.md states). A backward step makes no token go
 * back. Needs libfaketime ({@code apt-get install libfaketime}; .ci/run
 * installs it); without it the tests are reported skipped, never passed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaseClockStepTest {

    private static final Path LIBFAKETIME = Path.of(System.getenv().getOrDefault("RUNBUS_TEST_LIBFAKETIME",
            "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"));
    private static final String TOPIC = "steps";

    private Path offset;
    private RedisServerProcess server;
    private RedisClient client;
    private StatefulRedisConnection<String, String> connection;
    private final List<Bus> buses = new ArrayList<>();
    private final List<Subscription> subscriptions = new ArrayList<>();

    /**
     * A server binary that runs under libfaketime: Debian's redis-server 7.0 does not (its allocator's start-up
     * calls clock_gettime before libfaketime is ready, and it gives up); the Redis 7.2.6 and Valkey 8.0.1 builds
     * beside the repository do. {@code RUNBUS_TEST_FAKETIME_REDIS} names another.
     */
    private static Path fakeableServer() {
        String named = System.getenv("RUNBUS_TEST_FAKETIME_REDIS");
        if (named != null) {
            return Path.of(named);
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            for (String b : List.of("redis-7.2.6/redis-server", "valkey-8.0.1/valkey-server")) {
                Path candidate = dir.resolve("shared/redis-servers").resolve(b);
                if (Files.isExecutable(candidate)) {
                    return candidate;
                }
            }
        }
        return null;
    }

    @BeforeEach
    void start() throws IOException {
        assumeTrue(Files.isReadable(LIBFAKETIME), "libfaketime is not installed at " + LIBFAKETIME);
        Path binary = fakeableServer();
        assumeTrue(binary != null, "no Redis build that runs under libfaketime (shared/redis-servers)");
        offset = Files.createTempFile("runbus-redis-clock-", ".offset");
        Files.writeString(offset, "+0");
        // The wall clock steps; the monotonic clock, as on a real host, does not.
        server = RedisServerProcess.startWithEnvironment(binary, Map.of("LD_PRELOAD", LIBFAKETIME.toString(),
                "FAKETIME_TIMESTAMP_FILE", offset.toString(), "FAKETIME_NO_CACHE", "1", "DONT_FAKE_MONOTONIC", "1"));
        client = RedisClient.create(server.uri());
        connection = client.connect();
    }

    @AfterEach
    void stop() throws IOException {
        subscriptions.forEach(s -> {
            try {
                s.close();
            } catch (RuntimeException ignored) {
                // its Redis may be gone
            }
        });
        buses.forEach(Bus::close);
        if (connection != null) {
            connection.close();
            client.shutdown();
        }
        if (server != null) {
            server.close();
        }
        if (offset != null) {
            Files.deleteIfExists(offset);
        }
    }

    private RedisCommands<String, String> redis() {
        return connection.sync();
    }

    private long redisMillis() {
        List<String> t = redis().time();
        return Long.parseLong(t.get(0)) * 1000 + Long.parseLong(t.get(1)) / 1000;
    }

    /** Steps the server's wall clock to {@code seconds} from the real time, and waits until it reads so. */
    private void stepClock(long seconds) throws IOException {
        long before = redisMillis();
        Files.writeString(offset, (seconds >= 0 ? "+" : "") + seconds);
        Wait.until("the Redis clock stepped", Duration.ofSeconds(5),
                () -> Math.abs(redisMillis() - before - seconds * 1000) < 2000);
    }

    private Bus bus(String prefix) {
        Bus bus = Bus.connect(BusConfig.builder(server.uri()).keyPrefix(prefix).commandTimeout(Duration.ofSeconds(2))
                .build());
        buses.add(bus);
        return bus;
    }

    private static long token(RedisCommands<String, String> redis, String prefix) {
        String lease = redis.get(prefix + ":{" + TOPIC + "}:lease:g");
        return lease == null ? -1 : Long.parseLong(lease.split(" ")[0]);
    }

    private static SubscribeOptions options() {
        return SubscribeOptions.builder().ordered(true).leaseTime(Duration.ofSeconds(10)).blockTime(Duration.ofMillis(200))
                .shutdownTimeout(Duration.ofSeconds(1)).build();
    }

    private static Message seq(int n) {
        return Message.builder("t", ("k:" + n).getBytes(StandardCharsets.UTF_8)).key("k").build();
    }

    @Test
    void aForwardStepEndsALeaseEarly_theEntryItsHolderWasRunningIsFencedAndRunAgainInOrderUnderAHigherToken()
            throws Exception {
        String prefix = "clock-" + UUID.randomUUID();
        List<String> starts = new CopyOnWriteArrayList<>();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        subscriptions.add(bus(prefix).subscribe(TOPIC, "g", "a", d -> {
            starts.add(new String(d.message().payload(), StandardCharsets.UTF_8));
            tokens.add(d.fencingToken());
            running.countDown();
            release.await(); // the holder still works when the step comes
        }, options()));
        Publisher publisher = bus(prefix).publisher();
        publisher.publish(TOPIC, seq(1));
        assertThat(running.await(20, TimeUnit.SECONDS)).isTrue();
        long tokenBefore = token(redis(), prefix);
        for (int n = 2; n <= 4; n++) {
            publisher.publish(TOPIC, seq(n));
        }

        stepClock(30); // past the 10 s lease: Redis ends it now, though its holder renewed it a second ago
        Wait.until("the lease ended by the step", Duration.ofSeconds(5),
                () -> token(redis(), prefix) != tokenBefore);
        release.countDown();
        Wait.until("all handled", Duration.ofSeconds(20), () -> starts.size() >= 5);

        // k:1's ack was refused (its lease was gone), so it ran again, first, under a new lease; nothing started
        // on the old lease after the step.
        assertThat(starts).containsExactly("k:1", "k:1", "k:2", "k:3", "k:4");
        assertThat(tokens.get(0)).isEqualTo(tokenBefore);
        assertThat(tokens.subList(1, tokens.size())).allSatisfy(t -> assertThat(t).isGreaterThan(tokenBefore));
        Wait.until("nothing pending", Duration.ofSeconds(10),
                () -> redis().xpending(prefix + ":{" + TOPIC + "}:stream", "g").getCount() == 0);
    }

    @Test
    void aBackwardStep_makesNoFencingTokenGoBack() throws Exception {
        String prefix = "clock-" + UUID.randomUUID();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        Subscription first = bus(prefix).subscribe(TOPIC, "g", "a", d -> tokens.add(d.fencingToken()), options());
        Publisher publisher = bus(prefix).publisher();
        publisher.publish(TOPIC, seq(1));
        Wait.until("k:1 handled", Duration.ofSeconds(20), () -> tokens.size() == 1);
        first.close(); // releases the lease: the next owner takes a new one

        stepClock(-3600);
        subscriptions.add(bus(prefix).subscribe(TOPIC, "g", "b", d -> tokens.add(d.fencingToken()), options()));
        publisher.publish(TOPIC, seq(2));
        Wait.until("k:2 handled", Duration.ofSeconds(20), () -> tokens.size() == 2);
        assertThat(tokens.get(1)).as("the token after the clock went back an hour").isGreaterThan(tokens.get(0));
    }
}
