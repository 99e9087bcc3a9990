package dev.runbus.bench;

import io.lettuce.core.Consumer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;

/**
 * The practical limit: a hand-written Lettuce loop per consumer, each on its own connection —
 * XREADGROUP COUNT 100 BLOCK 100, handle the batch, one XACK for the whole batch.
 */
final class LettuceLoopContender implements Contender {

    static final String NAME = "Lettuce loop";

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
        return "hand-written loop per consumer on its own connection (Lettuce 7.7 sync API): XREADGROUP COUNT 100"
                + " BLOCK 100, then one XACK per batch";
    }

    @Override
    public String keyPrefix() {
        return prefix;
    }

    @Override
    @SuppressWarnings("unchecked") // XREADGROUP of one stream: a varargs array of one generic offset
    public Consumers start(Target target, int consumers, Probe probe) throws Exception {
        String key = target.streamKey();
        String group = target.group();
        XReadArgs args = XReadArgs.Builder.count(100).block(Duration.ofMillis(100));
        XReadArgs.StreamOffset<String> offset = XReadArgs.StreamOffset.lastConsumed(key);
        java.util.List<AutoCloseable> connections = new java.util.ArrayList<>();
        ConsumerThreads threads = new ConsumerThreads("lettuce-loop", consumers, i -> {
            StatefulRedisConnection<String, String> c = client.connect();
            connections.add(c);
            RedisCommands<String, String> redis = c.sync();
            Consumer<String> me = Consumer.from(group, "lettuce-" + i);
            return () -> {
                List<StreamMessage<String, String>> batch = redis.xreadgroup(me, args, offset);
                if (batch.isEmpty()) {
                    return;
                }
                String[] ids = new String[batch.size()];
                long[] enqueued = probe.timing() ? new long[ids.length] : null;
                for (int k = 0; k < ids.length; k++) {
                    StreamMessage<String, String> m = batch.get(k);
                    ids[k] = m.getId();
                    if (enqueued != null) {
                        enqueued[k] = Payloads.enqueuedAt(m.getBody().get("payload"));
                    }
                    probe.handled();
                }
                redis.xack(key, group, ids);
                if (enqueued != null) {
                    long now = Payloads.now();
                    for (long e : enqueued) {
                        probe.acked(e, now);
                    }
                }
            };
        });
        connections.forEach(threads::closing);
        return threads;
    }

    @Override
    public void close() {
        client.shutdown();
    }
}
