package dev.runbus.internal.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.BusConfig;
import dev.runbus.BusListener;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.internal.redis.WireFormat;
import dev.runbus.internal.scripts.ScriptCalls;
import dev.runbus.internal.telemetry.SafeListener;
import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.RedisServerProcess;
import io.lettuce.core.Consumer;
import io.lettuce.core.XAddArgs;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What {@code retentionKeepLast} costs Redis per round: {@code retention.lua} used to read the newest
 * {@code keepLast} entries, payloads included, on every round of every partition longer than that, to find where
 * they begin. It reads now only entries it trims (at most twice as many). Measured on a Redis of the test's own,
 * by the server's own clock ({@code SLOWLOG} with every command logged), with 10,000 entries of 2 KB kept; the
 * figures are printed (docs/architecture.md quotes them), and what each round leaves is asserted.
 */
class RetentionKeepLastCostTest {

    private static final int KEEP = BusConfig.MAX_RETENTION_KEEP_LAST;
    private static final byte[] PAYLOAD = new byte[2048];
    private static RedisServerProcess server;

    @BeforeAll
    static void start() {
        server = RedisServerProcess.start("--slowlog-log-slower-than", "0", "--slowlog-max-len", "100000");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aRoundThatTrimsAFewEntriesReadsAboutThoseNotTheNewestKeepLast() {
        Keys keys = new Keys("test-keep-cost");
        String stream = keys.stream("orders");
        try (RedisLink link = RedisLink.open(server.uri(), Duration.ofSeconds(30))) {
            var redis = link.sync();
            redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g", XGroupCreateArgs.Builder.mkstream(true));
            publishAndAck(redis, stream, KEEP + 2_000);
            Retention retention = new Retention(ScriptCalls.auto(redis), redis, keys, Duration.ZERO, KEEP, null,
                    new SafeListener(BusListener.NONE), link.version().hasAckedTrim());

            long first = timedRound(retention, redis, stream);
            assertThat(redis.xlen(stream)).isEqualTo(KEEP);

            List<Long> steady = new ArrayList<>();
            for (int round = 0; round < 5; round++) {
                publishAndAck(redis, stream, 10);
                steady.add(timedRound(retention, redis, stream));
                assertThat(redis.xlen(stream)).as("the newest %d kept, the 10 older trimmed", KEEP).isEqualTo(KEEP);
            }
            long best = steady.stream().mapToLong(Long::longValue).min().orElseThrow();
            System.out.printf("retention keepLast %d, 2 KB entries: round trimming 2,000: %d us; rounds trimming 10: "
                    + "%s us%n", KEEP, first, steady);
            // A figure to read, not to assert (speed is measured, never asserted in a test): reading the newest
            // 10,000 took 0.8-1.1 s a round; rounds trimming 10 now take well under a millisecond.
            System.out.printf("retention keepLast: best round trimming 10: %d us%n", best);
        }
    }

    private static void publishAndAck(io.lettuce.core.cluster.api.sync.RedisClusterCommands<String, byte[]> redis,
                                      String stream, int n) {
        for (int i = 0; i < n; i += 500) {
            for (int j = i; j < Math.min(n, i + 500); j++) {
                redis.xadd(stream, new XAddArgs(), Map.of("type", WireFormat.utf8("t"), "payload", PAYLOAD));
            }
            var read = redis.xreadgroup(Consumer.from("g", "c"), XReadArgs.Builder.count(500),
                    XReadArgs.StreamOffset.lastConsumed(stream));
            redis.xack(stream, "g", read.stream().map(m -> m.getId()).toArray(String[]::new));
        }
    }

    /** One retention round; how long its script ran in Redis, in microseconds, by the slow log. */
    private static long timedRound(Retention retention, io.lettuce.core.cluster.api.sync.RedisClusterCommands<String,
            byte[]> redis, String stream) {
        RedisClusterProcess.call(server, r -> r.slowlogReset());
        retention.round(List.of(Partitions.single("orders")), true);
        List<Object> log = RedisClusterProcess.call(server, r -> r.slowlogGet(100_000));
        long micros = -1;
        for (Object o : log) {
            List<?> entry = (List<?>) o;
            List<?> args = (List<?>) entry.get(3);
            String command = String.valueOf(args.get(0)).toLowerCase();
            if (command.equals("evalsha") || command.equals("eval") || command.equals("fcall")) {
                micros = Math.max(micros, (Long) entry.get(2));
            }
        }
        assertThat(micros).as("the retention script in the slow log").isNotNegative();
        return micros;
    }
}
