package dev.runbus.internal.consume;

import dev.runbus.internal.delay.DelayMover;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.scripts.ScriptCalls;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Clock;

/**
 * What a subscription takes from the bus that starts it: the shared connection and scripts, the delay mover, the
 * listener and the settings its loops need. The bus hands the same one to every subscription, so that plain and
 * ordered subscriptions never refer back to the class that composes them.
 *
 * @param groups creates a group on a partition's stream when it is missing (a read found it gone)
 * @param writesInCallOrder whether commands given to {@code async} from threads other than the client's I/O thread
 *                          reach Redis in the order of the calls: true on one connection (a server, or one found through
 *                          Sentinel); false on a cluster, where a command waits for its node's connection and the
 *                          commands waiting for one connection are written in no set order
 * @param gate the turns of every handler of the bus: an entry that must run alone waits for the others
 */
public record BusServices(SafeListener listener, RedisClusterCommands<String, byte[]> sync,
                          RedisClusterAsyncCommands<String, byte[]> async, ScriptCalls scriptCalls, Scripts scripts,
                          Keys keys, DelayMover delays, Clock clock, long commandTimeoutMillis,
                          ReadLoop.GroupCreator groups, boolean writesInCallOrder, HandlerGate gate) {
}
