package dev.runbus.bench;

import java.time.Duration;
import java.util.Map;
import org.redisson.Redisson;
import org.redisson.api.RStream;
import org.redisson.api.RedissonClient;
import org.redisson.api.StreamMessageId;
import org.redisson.api.stream.StreamReadGroupArgs;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Redisson's RStream, as its documentation shows it: a loop per consumer calling
 * {@code readGroup(group, consumer, neverDelivered().count(100).timeout(100 ms))}, then one
 * {@code ack(group, ids...)} per batch. One Redisson client with its default connection pool.
 */
final class RedissonContender implements Contender {

    static final String NAME = "Redisson";

    private final RedissonClient redisson;
    private final String prefix;

    RedissonContender(String redisUri, String prefix) {
        Config config = new Config();
        config.useSingleServer().setAddress(redisUri);
        this.redisson = Redisson.create(config);
        this.prefix = prefix;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String describe() {
        return "Redisson 3.52 RStream with StringCodec, default pool: readGroup(neverDelivered().count(100)"
                + ".timeout(100 ms)) per consumer thread, then ack(group, ids...) per batch";
    }

    @Override
    public String keyPrefix() {
        return prefix;
    }

    @Override
    public Consumers start(Target target, int consumers, Probe probe) throws Exception {
        RStream<String, String> stream = redisson.getStream(target.streamKey(), StringCodec.INSTANCE);
        String group = target.group();
        StreamReadGroupArgs args = StreamReadGroupArgs.neverDelivered().count(100).timeout(Duration.ofMillis(100));
        return new ConsumerThreads("redisson", consumers, i -> {
            String me = "redisson-" + i;
            return () -> {
                Map<StreamMessageId, Map<String, String>> batch = stream.readGroup(group, me, args);
                if (batch == null || batch.isEmpty()) {
                    return;
                }
                StreamMessageId[] ids = new StreamMessageId[batch.size()];
                long[] enqueued = probe.timing() ? new long[ids.length] : null;
                int k = 0;
                for (Map.Entry<StreamMessageId, Map<String, String>> e : batch.entrySet()) {
                    ids[k] = e.getKey();
                    if (enqueued != null) {
                        enqueued[k] = Payloads.enqueuedAt(e.getValue().get("payload"));
                    }
                    probe.handled();
                    k++;
                }
                // ack(...) as the documentation shows it is ackAsync(...) awaited; the reply's own callback stamps
                // it, on Redisson's event loop, as runbus's acks are stamped
                org.redisson.api.RFuture<Long> acked = stream.ackAsync(group, ids);
                if (enqueued != null) {
                    acked.thenRun(() -> AckStamp.all(probe, enqueued));
                }
                acked.toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
            };
        });
    }

    @Override
    public void close() {
        redisson.shutdown();
    }
}
