package dev.runbus.internal.consume;

import dev.runbus.RunbusException;
import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import io.lettuce.core.RedisBusyException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates consumer groups on the partitions' streams, at their start (and the stream), where they are missing: for a
 * subscribe on every partition at once, and again for a read that found one gone. An existing group is left as it is.
 */
public final class Groups implements ReadLoop.GroupCreator {

    private static final Logger log = LoggerFactory.getLogger(Groups.class);

    private final RedisClusterAsyncCommands<String, byte[]> redis;
    private final Keys keys;
    private final long commandTimeoutMillis;

    public Groups(RedisClusterAsyncCommands<String, byte[]> redis, Keys keys, long commandTimeoutMillis) {
        this.redis = redis;
        this.keys = keys;
        this.commandTimeoutMillis = commandTimeoutMillis;
    }

    @Override
    public CompletableFuture<Void> ensureGroupAsync(String name, String group) {
        return redis.xgroupCreate(XReadArgs.StreamOffset.from(keys.stream(name), "0"), group,
                XGroupCreateArgs.Builder.mkstream(true)).toCompletableFuture().handle((ok, e) -> {
                    Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                    if (cause == null || cause instanceof RedisBusyException) {
                        return null; // BUSYGROUP: the group exists; use it as it is
                    }
                    throw cause instanceof RuntimeException r ? r : new CompletionException(cause);
                });
    }

    /**
     * Creates {@code group} on every partition's stream, all at once, each within the command timeout; returns the
     * partitions where it exists now. A partition whose master does not answer in time (stopped, hung, unreachable) is
     * left out: the subscription creates its group when the master answers (docs/architecture.md, rule 14). A refusal
     * (no right, a key of another type) fails, and so does a creation that no partition answered.
     */
    public Set<Integer> createAll(Partitions partitions, String group) {
        List<CompletableFuture<Void>> sent = new ArrayList<>();
        for (String name : partitions.names()) {
            sent.add(ensureGroupAsync(name, group));
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(commandTimeoutMillis);
        Set<Integer> created = new TreeSet<>();
        RunbusException unanswered = null;
        for (int p = 0; p < sent.size(); p++) {
            String what = "creating group " + group + " of " + partitions.name(p);
            Throwable failure;
            try {
                sent.get(p).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                created.add(p);
                continue;
            } catch (TimeoutException e) {
                sent.get(p).cancel(true);
                failure = new RunbusException("no answer within " + commandTimeoutMillis + " ms", e);
            } catch (ExecutionException e) {
                failure = e.getCause();
                if (!(failure instanceof RedisCommandTimeoutException || failure instanceof RedisConnectionException)) {
                    throw new RunbusException(what + " failed: " + Calls.describe(failure), failure);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RunbusException(what + " interrupted", e);
            }
            if (unanswered == null) {
                unanswered = new RunbusException(what + " failed: " + Calls.describe(failure), failure);
            }
        }
        if (created.isEmpty()) {
            throw unanswered;
        }
        if (unanswered != null) {
            log.warn("{} of {} partitions of {} did not answer the creation of group {}; each gets it when its master "
                    + "answers ({})", partitions.count() - created.size(), partitions.count(), partitions.topic(), group,
                    unanswered.getMessage());
        }
        return created;
    }
}
