package dev.runbus.bench;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;

/**
 * The one producer of every scenario, the same for every contender: plain XADDs of entries in runbus's wire
 * format (id, type, payload, published_at), so that runbus and the other libraries read identical entries.
 * Bulk publishing is pipelined in batches of {@value #BATCH} (all XADDs of a batch leave in one write, the
 * replies are awaited before the next batch); paced publishing sends each XADD at its time.
 */
public final class Producer implements AutoCloseable {

    public static final int BATCH = 1_000;
    private static final byte[] TYPE = "bench".getBytes(StandardCharsets.UTF_8);

    private final StatefulRedisConnection<String, byte[]> pipelined;
    private final StatefulRedisConnection<String, byte[]> paced;

    public Producer(RedisClient client) {
        RedisCodec<String, byte[]> codec = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);
        this.pipelined = client.connect(codec);
        this.pipelined.setAutoFlushCommands(false);
        this.paced = client.connect(codec);
    }

    /** Publishes messages {@code from} .. {@code from + count - 1}; {@code poison} marks which are poison. */
    public void publish(String streamKey, long from, int count, IntPredicate poison) {
        RedisAsyncCommands<String, byte[]> redis = pipelined.async();
        List<RedisFuture<String>> futures = new ArrayList<>(BATCH);
        for (int done = 0; done < count; ) {
            int n = Math.min(BATCH, count - done);
            futures.clear();
            for (int i = 0; i < n; i++) {
                long seq = from + done + i;
                futures.add(redis.xadd(streamKey, fields(seq, Payloads.make(Payloads.now(), poison.test((int) seq)))));
            }
            pipelined.flushCommands();
            if (!LettuceFutures.awaitAll(Duration.ofSeconds(30), futures.toArray(new RedisFuture<?>[0]))) {
                throw new IllegalStateException("publishing a batch timed out");
            }
            done += n;
        }
    }

    /**
     * Publishes in pipelined batches while at most {@code maxBacklog} messages are published and not yet
     * handled ({@code handled} says how many are), so that a long run keeps Redis's memory bounded.
     */
    public void publishWithBacklog(String streamKey, long from, int count, int maxBacklog, LongSupplier handled) {
        for (int done = 0; done < count; ) {
            while (from + done - handled.getAsLong() > maxBacklog) {
                LockSupport.parkNanos(200_000);
            }
            int n = Math.min(BATCH, count - done);
            publish(streamKey, from + done, n, i -> false);
            done += n;
        }
    }

    /**
     * Publishes {@code rate} messages per second for {@code millis} ms, each XADD sent on its own at its time
     * (sent late when the thread wakes late, never in a burst that hides it: the payload carries the time of
     * sending). Returns how many were sent.
     */
    public int publishPaced(String streamKey, int rate, long millis) {
        RedisAsyncCommands<String, byte[]> redis = paced.async();
        long interval = 1_000_000_000L / rate;
        int total = (int) (rate * millis / 1000);
        long start = System.nanoTime();
        RedisFuture<String> last = null;
        for (int i = 0; i < total; i++) {
            long due = start + i * interval;
            long wait;
            while ((wait = due - System.nanoTime()) > 0) {
                LockSupport.parkNanos(Math.min(wait, 50_000));
            }
            last = redis.xadd(streamKey, fields(i, Payloads.make(Payloads.now(), false)));
        }
        if (last != null) {
            try {
                last.get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("paced publishing failed: " + e.getMessage(), e);
            }
        }
        return total;
    }

    private static Map<String, byte[]> fields(long seq, byte[] payload) {
        Map<String, byte[]> f = new LinkedHashMap<>(8);
        f.put("id", ("m-" + seq).getBytes(StandardCharsets.US_ASCII));
        f.put("type", TYPE);
        f.put("payload", payload);
        f.put("published_at", Long.toString(System.currentTimeMillis()).getBytes(StandardCharsets.US_ASCII));
        return f;
    }

    @Override
    public void close() {
        pipelined.close();
        paced.close();
    }
}
