package dev.runbus.internal;

import io.lettuce.core.api.async.RedisAsyncCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Acknowledges finished entries in batches: one thread sends one XACK with every id that finished while
 * the previous XACK was on the wire (group commit). Under load that is hundreds of ids per round trip;
 * when idle, an ack leaves at once.
 *
 * <p>A failed XACK is reported and dropped: the entries stay pending and are delivered again, which
 * at-least-once delivery allows. Acks that arrive after {@link #close()} are dropped the same way.
 */
final class Acker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Acker.class);
    private static final int MAX_IDS_PER_XACK = 1000;

    private final RedisAsyncCommands<String, byte[]> redis;
    private final String stream;
    private final String group;
    private final long timeoutMillis;
    private final SafeListener listener;
    private final BlockingQueue<String> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean closing;

    Acker(RedisAsyncCommands<String, byte[]> redis, String stream, String group, long timeoutMillis,
          SafeListener listener, String threadName) {
        this.redis = redis;
        this.stream = stream;
        this.group = group;
        this.timeoutMillis = timeoutMillis;
        this.listener = listener;
        this.thread = new Thread(this::run, threadName);
        this.thread.setDaemon(true);
    }

    Acker start() {
        thread.start();
        return this;
    }

    void ack(String streamId) {
        if (closing && !thread.isAlive()) {
            log.debug("ack of {} after close dropped; it stays pending", streamId);
            return;
        }
        queue.add(streamId);
    }

    /** Acknowledges now, on the caller's thread (ack-before-work mode and skipped entries). */
    void ackNow(List<String> ids) {
        if (!ids.isEmpty()) {
            send(ids);
        }
    }

    private void run() {
        List<String> batch = new ArrayList<>(MAX_IDS_PER_XACK);
        while (true) {
            String first;
            try {
                first = queue.poll(50, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (first == null) {
                if (closing) {
                    return;
                }
                continue;
            }
            batch.add(first);
            queue.drainTo(batch, MAX_IDS_PER_XACK - 1);
            try {
                send(batch);
            } catch (RuntimeException e) {
                log.warn("XACK of {} entries failed; they stay pending and will be delivered again", batch.size(), e);
                listener.onLoopError("acker " + stream + "/" + group, e);
            }
            batch.clear();
        }
    }

    private void send(List<String> ids) {
        try {
            redis.xack(stream, group, ids.toArray(new String[0])).get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while acknowledging", e);
        } catch (Exception e) {
            throw new IllegalStateException("XACK failed: " + e.getMessage(), e);
        }
    }

    /** Sends every queued ack, then stops. */
    @Override
    public void close() {
        closing = true;
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
