package dev.runbus.bench;

import io.lettuce.core.Consumer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The practical limit: the loop a careful user writes by hand with Lettuce, one per consumer on its own
 * connection — XREADGROUP COUNT 100 BLOCK 100 with the byte-array codec (no decoding of fields nobody reads),
 * handle the batch, then send one XACK for the batch without waiting for it and read the next batch at once:
 * the XACK and the next XREADGROUP leave together, and their replies come back in order on the connection.
 */
final class LettuceLoopContender implements Contender {

    static final String NAME = "Lettuce loop";
    private static final byte[] PAYLOAD = "payload".getBytes(StandardCharsets.US_ASCII);

    private final RedisClient client;
    private final String prefix;

    LettuceLoopContender(String redisUri, String prefix) {
        this.client = RedisClient.create(redisUri);
        this.prefix = prefix;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String describe() {
        return "hand-written loop per consumer on its own connection (Lettuce 7.7 async API, byte-array codec):"
                + " XREADGROUP COUNT 100 BLOCK 100, then one XACK per batch, sent without waiting and pipelined"
                + " with the next XREADGROUP";
    }

    @Override
    public String keyPrefix() {
        return prefix;
    }

    @Override
    @SuppressWarnings("unchecked") // XREADGROUP of one stream: a varargs array of one generic offset
    public Consumers start(Target target, int consumers, Probe probe) throws Exception {
        byte[] key = target.streamKey().getBytes(StandardCharsets.UTF_8);
        byte[] group = target.group().getBytes(StandardCharsets.UTF_8);
        XReadArgs args = XReadArgs.Builder.count(100).block(Duration.ofMillis(100));
        XReadArgs.StreamOffset<byte[]> offset = XReadArgs.StreamOffset.lastConsumed(key);
        java.util.List<AutoCloseable> connections = new java.util.ArrayList<>();
        ConsumerThreads threads = new ConsumerThreads("lettuce-loop", consumers, i -> {
            StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE);
            connections.add(c);
            RedisAsyncCommands<byte[], byte[]> redis = c.async();
            Consumer<byte[]> me = Consumer.from(group, ("lettuce-" + i).getBytes(StandardCharsets.UTF_8));
            return () -> {
                // waits for this read only; the previous batch's XACK went out just before it
                List<StreamMessage<byte[], byte[]>> batch = redis.xreadgroup(me, args, offset)
                        .get(10, TimeUnit.SECONDS);
                if (batch.isEmpty()) {
                    return;
                }
                String[] ids = new String[batch.size()];
                long[] enqueued = probe.timing() ? new long[ids.length] : null;
                for (int k = 0; k < ids.length; k++) {
                    StreamMessage<byte[], byte[]> m = batch.get(k);
                    ids[k] = m.getId();
                    if (enqueued != null) {
                        enqueued[k] = Payloads.enqueuedAt(payload(m.getBody()));
                    }
                    probe.handled();
                }
                RedisFuture<Long> acked = redis.xack(key, group, ids);
                if (enqueued != null) {
                    // stamped when the reply arrives, on Lettuce's event loop: where runbus's acks are stamped
                    acked.thenRun(() -> AckStamp.all(probe, enqueued));
                }
            };
        });
        connections.forEach(threads::closing);
        return threads;
    }

    /** The payload field: byte-array keys compare by identity in the body's map, so found by content. */
    private static byte[] payload(java.util.Map<byte[], byte[]> body) {
        for (java.util.Map.Entry<byte[], byte[]> f : body.entrySet()) {
            if (java.util.Arrays.equals(f.getKey(), PAYLOAD)) {
                return f.getValue();
            }
        }
        throw new IllegalStateException("an entry without a payload field");
    }

    @Override
    public void close() {
        client.shutdown();
    }
}
