package dev.runbus.internal.registry;

import dev.runbus.RunbusException;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.scripts.ScriptNotRun;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The heartbeats of a bus's consumers (docs/architecture.md, rule 6): a consumer's first one tells the age of the
 * previous one under its name (a fresh one is another live process's, and is reported); then one every
 * interval while the consumer runs; removed when it closes cleanly, so that an orderly restart under the
 * name is not taken for a second process.
 *
 * <p>One lock orders the periodic write against a close's removal: both are sent under it on the same
 * connection (the write as a whole script, which Redis cannot answer NOSCRIPT, or as an FCALL that is not sent
 * again when a master lost the library: that round's write is skipped, the next interval's writes), so the
 * periodic write does not bring back the heartbeat of a consumer that closed. Neither waits for Redis under the
 * lock.
 */
public final class Heartbeats {

    private static final Logger log = LoggerFactory.getLogger(Heartbeats.class);

    /** One consumer of one group. */
    public record Name(String topic, String group, String consumer) {
    }

    private final Scripts scripts;
    private final RedisClusterAsyncCommands<String, byte[]> async;
    private final Keys keys;
    private final Duration interval;
    private final long timeoutMillis;
    private final SafeListener listener;
    /** Consumers that wrote their first heartbeat and have not closed; guarded by {@code this}. */
    private final Set<Name> beating = new LinkedHashSet<>();

    public Heartbeats(Scripts scripts, RedisClusterAsyncCommands<String, byte[]> async, Keys keys, Duration interval,
               long timeoutMillis, SafeListener listener) {
        this.scripts = scripts;
        this.async = async;
        this.keys = keys;
        this.interval = interval;
        this.timeoutMillis = timeoutMillis;
        this.listener = listener;
    }

    /**
     * Before a consumer reads anything: writes its first heartbeat (throws if Redis cannot take it), which
     * tells how old the name's previous one was; younger than two intervals is reported. Only a report: a
     * process restarted right after a crash looks the same, and its start must not fail.
     */
    public void start(Name n) {
        long since = scripts.heartbeat(n.topic(), n.group(), n.consumer());
        if (since >= 0 && since < 2 * interval.toMillis()) {
            listener.onConsumerNameInUse(n.topic(), n.group(), n.consumer(), Duration.ofMillis(since));
        }
        synchronized (this) {
            beating.add(n);
        }
    }

    /** One heartbeat script per group for every started consumer; waits for the answers outside the lock. */
    public void beat() {
        List<CompletableFuture<List<Object>>> sent = new ArrayList<>();
        synchronized (this) {
            Map<List<String>, List<String>> byGroup = new LinkedHashMap<>();
            for (Name n : beating) {
                byGroup.computeIfAbsent(List.of(n.topic(), n.group()), k -> new ArrayList<>()).add(n.consumer());
            }
            byGroup.forEach((tg, names) -> sent.add(scripts.heartbeatAsync(tg.get(0), tg.get(1), names)));
        }
        for (CompletableFuture<List<Object>> reply : sent) {
            try {
                reply.get(timeoutMillis, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException e) {
                if (e.getCause() instanceof ScriptNotRun notRun) {
                    // One round missed, the library loaded again: a consumer is dead only after several.
                    log.debug("heartbeat skipped this round", notRun);
                    continue;
                }
                throw e.getCause() instanceof RuntimeException ? (RuntimeException) e.getCause()
                        : new RunbusException("heartbeat failed: " + e.getCause(), e.getCause());
            } catch (TimeoutException e) {
                throw new RunbusException("heartbeat not answered within " + timeoutMillis + " ms", e);
            }
        }
    }

    /**
     * After a clean close. The removal is sent without waiting, so that a close with Redis unreachable is not
     * held up by it; if it is lost, a start under the name within two intervals reports it. Until the janitor
     * deletes the consumer, it is judged by its idle time.
     */
    public void stop(Name n) {
        synchronized (this) {
            beating.remove(n);
            try {
                async.zrem(keys.heartbeats(n.topic(), n.group()), n.consumer().getBytes(StandardCharsets.UTF_8))
                        .whenComplete((removed, e) -> {
                            if (e != null) {
                                log.debug("could not remove the heartbeat of {}", n, e);
                            }
                        });
            } catch (RuntimeException e) {
                log.debug("could not remove the heartbeat of {}", n, e);
            }
        }
    }
}
