package dev.runbus.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.RetryPolicy;
import dev.runbus.SubscribeOptions;
import dev.runbus.internal.delay.CrashPoints;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * A bus in a child JVM that stops for good at one {@link CrashPoints.Point}, for the delay crash tests: it prints
 * {@code AT <point>} and parks the thread that reached it, and the test kills it with SIGKILL.
 *
 * <p>Mode {@code retry}: consumer {@code c1} of group {@code g}, retry policy {@code fixed(300 ms)}; its handler
 * records {@code "<payload>#<attempt>@c1"} in the log list and fails every first attempt. It stops at the point
 * the first time it is reached. Mode {@code mover}: schedules payload {@code d1} one second ahead, then subscribes
 * as group {@code child} (so that its mover watches the topic) with a handler that does nothing; it stops at
 * {@code BEFORE_MOVE} once the entry is due and still scheduled, at {@code AFTER_MOVE} once it was moved.
 *
 * <p>Arguments: redis-uri key-prefix topic mode point log-key. Prints {@code READY} when subscribed.
 */
public final class DelayCrashChild {

    public static void main(String[] args) throws InterruptedException {
        String uri = args[0];
        String prefix = args[1];
        String topic = args[2];
        String mode = args[3];
        CrashPoints.Point point = CrashPoints.Point.valueOf(args[4]);
        String logKey = args[5];
        RedisCommands<String, String> redis = RedisClient.create(uri).connect().sync();
        String delayed = prefix + ":{" + topic + "}:delayed";
        String stream = prefix + ":{" + topic + "}:stream";
        CrashPoints.install(p -> {
            if (p != point) {
                return;
            }
            if (mode.equals("mover")) {
                synchronized (redis) {
                    if (p == CrashPoints.Point.BEFORE_MOVE) {
                        // The mover may look a moment before the entry is due by the Redis clock and move it the
                        // next moment: held here until it is due, it stops before that move, whenever it looked.
                        if (redis.zcard(delayed) == 0) {
                            return;
                        }
                        while (redis.zrangebyscore(delayed, Range.create(0, (double) now(redis))).isEmpty()) {
                            LockSupport.parkNanos(10_000_000L);
                        }
                    } else if (!(redis.zcard(delayed) == 0 && redis.xlen(stream) == 1)) {
                        return;
                    }
                }
            }
            System.out.println("AT " + p);
            System.out.flush();
            while (true) {
                LockSupport.park(); // until SIGKILL
            }
        });
        Bus bus = Bus.connect(BusConfig.builder(uri).keyPrefix(prefix).build());
        SubscribeOptions.Builder options = SubscribeOptions.builder().blockTime(Duration.ofMillis(300))
                .minIdle(Duration.ofSeconds(1)).claimInterval(Duration.ofMillis(200));
        if (mode.equals("retry")) {
            bus.subscribe(topic, "g", "c1", d -> {
                synchronized (redis) {
                    redis.rpush(logKey, new String(d.message().payload(), StandardCharsets.UTF_8) + "#" + d.attempt()
                            + "@c1");
                }
                if (d.attempt() == 1) {
                    throw new IllegalStateException("first attempts fail");
                }
            }, options.retryPolicy(RetryPolicy.fixed(Duration.ofMillis(300))).maxDeliveries(3).build());
        } else {
            bus.publisher().publish(topic, Message.of("t", "d1".getBytes(StandardCharsets.UTF_8)),
                    Duration.ofSeconds(1));
            bus.subscribe(topic, "child", "c1", d -> { }, options.build());
        }
        System.out.println("READY");
        System.out.flush();
        Thread.currentThread().join(); // the bus's threads are daemons: stay until killed
    }

    private static long now(RedisCommands<String, String> redis) {
        List<String> t = redis.time();
        return Long.parseLong(t.get(0)) * 1000 + Long.parseLong(t.get(1)) / 1000;
    }
}
