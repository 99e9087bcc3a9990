package dev.runbus.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Partitioner;
import dev.runbus.SubscribeOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * An ordered consumer in a child JVM, for fault tests: its handler's one effect is a record of what it ran,
 * {@code "<consumer> <partition> <key> <seq> <fencing token>"}, written as a store that honours fencing tokens
 * does: appended to the log only if the token is not lower than the highest the partition's writes carried,
 * else appended to the refused log and the handler fails. Then 2 ms of work. It closes the bus on SIGTERM and
 * prints {@code READY} once subscribed.
 *
 * <p>Arguments: redis-uri key-prefix topic partitions consumer lease-millis log-key
 * (the refused log is {@code <log-key>:refused}, the highest tokens {@code <log-key>:tokens})
 */
public final class OrderedChild {

    private static final String FENCED_APPEND = String.join("\n",
            "local highest = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')",
            "if tonumber(ARGV[2]) < highest then",
            "  redis.call('RPUSH', KEYS[3], ARGV[3])",
            "  return 0",
            "end",
            "redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])",
            "redis.call('RPUSH', KEYS[1], ARGV[3])",
            "return 1");

    public static void main(String[] args) throws Exception {
        String topic = args[2];
        int partitions = Integer.parseInt(args[3]);
        String consumer = args[4];
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1]).partitions(topic, partitions).build());
        RedisCommands<String, String> log = RedisClient.create(args[0]).connect().sync();
        SubscribeOptions options = SubscribeOptions.builder().ordered(true).concurrency(4).batchSize(20)
                .leaseTime(Duration.ofMillis(Long.parseLong(args[5]))).blockTime(Duration.ofMillis(300))
                .minIdle(Duration.ofMillis(200)).shutdownTimeout(Duration.ofSeconds(5)).build();
        bus.subscribe(topic, "g", consumer, d -> {
            String[] ks = new String(d.message().payload(), StandardCharsets.UTF_8).split(":");
            int p = Partitioner.partitionOf(ks[0], partitions);
            String record = consumer + " " + p + " " + ks[0] + " " + ks[1] + " " + d.fencingToken();
            Long written = log.eval(FENCED_APPEND, io.lettuce.core.ScriptOutputType.INTEGER,
                    new String[] {args[6], args[6] + ":tokens", args[6] + ":refused"}, Integer.toString(p),
                    Long.toString(d.fencingToken()), record);
            if (written == 0) {
                throw new IllegalStateException("write refused: token " + d.fencingToken() + " is stale");
            }
            Thread.sleep(2);
        }, options);
        Runtime.getRuntime().addShutdownHook(new Thread(bus::close));
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
