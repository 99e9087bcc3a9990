package dev.runbus.internal.deadletter;

import dev.runbus.BusListener;
import dev.runbus.DeadLetter;
import dev.runbus.internal.redis.Keys;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.UUID;
import java.util.function.ToLongFunction;

/**
 * Tells {@link BusListener#onDeadLetterDepthRaised} once per rise of a topic's dead-letter depth from zero, across
 * every process: a key in Redis ({@link Keys#deadLettersRaised}) is set while the topic has dead letters, and only
 * the {@code SET NX} that creates it raises the alarm.
 *
 * <p>A topic's dead letters live in one stream per partition, on as many cluster slots, so no script sees the
 * depth and the key at once. The key is therefore cleared in an order that can repeat an alarm but never lose one:
 * after a purge or a trim, when the topic's count reads zero the key is deleted, and the count is read again; dead
 * letters made meanwhile (whose own {@code SET NX} may have found the key still there) set it and raise the alarm
 * then.
 */
public final class DeadLetterAlarm implements BusListener {

    private final RedisClusterCommands<String, byte[]> redis;
    private final Keys keys;
    private final ToLongFunction<String> depth;
    private final BusListener listener;

    /**
     * @param depth    the topic's dead-letter count, all partitions
     * @param listener who hears the alarm (the bus's own listener, which fans it out)
     */
    public DeadLetterAlarm(RedisClusterCommands<String, byte[]> redis, Keys keys, ToLongFunction<String> depth,
                    BusListener listener) {
        this.redis = redis;
        this.keys = keys;
        this.depth = depth;
        this.listener = listener;
    }

    /** A dead letter was made: raise the alarm if it is the first since the depth was zero. */
    @Override
    public void onDeadLetter(DeadLetter deadLetter) {
        raiseIfFirst(deadLetter.topic());
    }

    /** Dead-letter retention trimmed some: the depth may be zero now. */
    @Override
    public void onDeadLettersTrimmed(String topic, long entries) {
        depthMayHaveFallen(topic);
    }

    /** After dead letters of {@code topic} were removed (purged or trimmed): clear the key if the depth is zero. */
    public void depthMayHaveFallen(String topic) {
        try {
            if (depth.applyAsLong(topic) > 0) {
                return;
            }
            redis.del(keys.deadLettersRaised(topic));
            if (depth.applyAsLong(topic) > 0) {
                raiseIfFirst(topic); // made while the key was cleared: their SET NX may have found it still there
            }
        } catch (RuntimeException e) {
            listener.onLoopError("dead-letter alarm of " + topic, e);
        }
    }

    /**
     * {@code SET NX} of a value of this call's own: a SET that timed out may still have run (or run when its
     * connection's unanswered commands were sent again), and only the key holding this call's value tells that
     * it was this call that raised the alarm, so that a rise is never lost to a lost reply.
     */
    private void raiseIfFirst(String topic) {
        String key = keys.deadLettersRaised(topic);
        byte[] mine = UUID.randomUUID().toString().getBytes(StandardCharsets.US_ASCII);
        boolean created;
        try {
            created = "OK".equals(redis.set(key, mine, SetArgs.Builder.nx()));
        } catch (RuntimeException unanswered) {
            try {
                created = Arrays.equals(redis.get(key), mine);
            } catch (RuntimeException again) {
                unanswered.addSuppressed(again);
                listener.onLoopError("dead-letter alarm of " + topic, unanswered);
                return;
            }
        }
        if (created) {
            listener.onDeadLetterDepthRaised(topic);
        }
    }
}
