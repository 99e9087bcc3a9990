package dev.runbus.bench;

import dev.runbus.Subscription;
import io.lettuce.core.RedisClient;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Measurement only: times runs from {@code submit} until their trigger's acknowledgement is confirmed by Redis
 * (the worker acks only after replies + done are committed, so this is submit → done → ack). Joins, after the
 * measurement, four facts gathered without touching the runs layer: when each submit started (by idempotency
 * key), which run the handler executed for a key, which stream entry carries a run (a plain XREAD of the trigger
 * stream, whose entries carry the run id as message id), and when each entry's XACK was confirmed
 * ({@link AckObserver} on the worker's subscription).
 */
final class RunClock implements AutoCloseable {

    private final Map<String, Long> submitted = new ConcurrentHashMap<>();
    private final Map<String, Long> submitReturned = new ConcurrentHashMap<>();
    private final Map<String, Long> handlerStarted = new ConcurrentHashMap<>();
    private final Map<String, String> keyOfRun = new ConcurrentHashMap<>();
    private final Map<String, String> runOfEntry = new ConcurrentHashMap<>();
    private final Map<String, Long> ackedAt = new ConcurrentHashMap<>();
    private final LongAdder executed = new LongAdder();
    private final StatefulRedisConnection<String, String> connection;
    private final Thread watcher;
    private volatile boolean closed;
    private boolean ackObserved;

    RunClock(RedisClient client, String triggerStream) {
        this.connection = client.connect();
        this.watcher = new Thread(() -> watch(triggerStream), "runbus-bench-trigger-watch");
        this.watcher.setDaemon(true);
        this.watcher.start();
    }

    /** Watches acks of the worker; false when the worker's acker could not be wrapped. */
    boolean observe(Subscription worker) {
        ackObserved = new AckObserver((ids, at) -> {
            for (String id : ids) {
                ackedAt.putIfAbsent(id, at);
            }
        }).install(worker);
        return ackObserved;
    }

    void submitting(String idempotencyKey) {
        submitted.put(idempotencyKey, Payloads.now());
    }

    /** The submit call returned: its run is committed and its trigger published. */
    void submitted(String idempotencyKey) {
        submitReturned.put(idempotencyKey, Payloads.now());
    }

    /** Called by the run handler. */
    void executing(String runId, String idempotencyKey) {
        keyOfRun.put(runId, idempotencyKey);
        handlerStarted.put(idempotencyKey, Payloads.now());
        executed.increment();
    }

    long executedCount() {
        return executed.sum();
    }

    /**
     * submit → ack of every run submitted (and timed) from {@code measureFrom} on, and where that time goes:
     * the submit call (insert committed, trigger published), submit returned → handler started (read, attempt
     * committed), handler started → ack confirmed (handler, completion committed, XACK).
     */
    Stages latencies(long measureFrom) {
        Stages stages = new Stages(new LatencyRecorder(), new LatencyRecorder(), new LatencyRecorder(),
                new LatencyRecorder());
        List.of(stages.total, stages.submit, stages.toHandler, stages.toAck).forEach(r -> r.measureFrom(measureFrom));
        for (Map.Entry<String, Long> ack : ackedAt.entrySet()) {
            String run = runOfEntry.get(ack.getKey());
            String key = run == null ? null : keyOfRun.get(run);
            Long at = key == null ? null : submitted.get(key);
            if (at == null) {
                continue;
            }
            stages.total.record(at, ack.getValue());
            Long returned = submitReturned.get(key);
            Long started = handlerStarted.get(key);
            if (returned != null && started != null) {
                // Each stage is recorded only for runs whose submit was measured; the shift keeps the filter.
                stages.submit.record(at, returned);
                stages.toHandler.record(at, at + (started - returned));
                stages.toAck.record(at, at + (ack.getValue() - started));
            }
        }
        return stages;
    }

    record Stages(LatencyRecorder total, LatencyRecorder submit, LatencyRecorder toHandler, LatencyRecorder toAck) {
    }

    @SuppressWarnings("unchecked") // XREAD of one stream: a varargs array of one generic offset
    private void watch(String stream) {
        String after = "0";
        XReadArgs args = XReadArgs.Builder.count(1000).block(Duration.ofMillis(100));
        while (!closed) {
            try {
                List<StreamMessage<String, String>> read = connection.sync().xread(args,
                        XReadArgs.StreamOffset.from(stream, after));
                for (StreamMessage<String, String> m : read) {
                    String run = m.getBody().get("id");
                    if (run != null) {
                        runOfEntry.put(m.getId(), run);
                    }
                    after = m.getId();
                }
            } catch (RuntimeException e) {
                if (!closed) {
                    Env.sleep(50);
                }
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            watcher.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        connection.close();
    }
}
