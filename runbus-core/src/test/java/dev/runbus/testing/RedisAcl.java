package dev.runbus.testing;

import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.ArrayList;
import java.util.List;

/**
 * The least-privilege Redis ACLs of runbus's clients, the tests' copy of the lines docs/security.md gives
 * operators ({@code DocumentedAclTest} checks that they are the same). Commands are listed by name, so that an audit can read them; scripts run with the caller's
 * rights, so the commands the Lua scripts call are listed as well as the ones sent directly.
 */
public final class RedisAcl {

    /** What a publisher's scripts and commands need besides the right to run the scripts (see below). */
    private static final String PUBLISHER_DATA_COMMANDS = "+get +set +exists +sadd +xadd +time +hsetnx +zadd +zscore";

    /**
     * A client that only publishes: {@code publish}, {@code publishAll} and delayed publishes (a publishing bus does
     * not move due entries into streams; the workers of the topic do), on Redis 7 and later and Valkey. INFO: the
     * version check on connect. FCALL: every script is a function of runbus's library, loaded beforehand by
     * {@code runbus migrate} ({@link #MIGRATE_COMMANDS}); the user may run no script of its own (no EVAL). GET, SET,
     * EXISTS: the topic's partition count (partition_count.lua); SADD: the list of topics; XADD: the entries;
     * TIME, HSETNX, ZADD, ZSCORE: scheduling (schedule.lua).
     */
    public static final String PUBLISHER_COMMANDS = "-@all +info +fcall " + PUBLISHER_DATA_COMMANDS;

    /**
     * {@link #PUBLISHER_COMMANDS} on Redis 6.2, which has no functions: EVAL, EVALSHA instead of FCALL (every script
     * is sent by its SHA and, when Redis does not know it, whole; no SCRIPT LOAD). Also what a bus configured with
     * {@code ScriptMode.EVAL} needs on any version.
     */
    public static final String PUBLISHER_COMMANDS_62 = "-@all +info +eval +evalsha " + PUBLISHER_DATA_COMMANDS;

    /**
     * A worker: everything a subscribing bus does (read, acknowledge, claim, keep claims alive, heartbeats, retry
     * with backoff, dead-letter, move due entries, ordered groups' leases, retention, the janitor, the inspector
     * and listing dead letters and scheduled entries) and everything a publisher does. CLIENT ID and CLIENT
     * UNBLOCK end a subscription's blocked read at once when it closes (CLIENT UNBLOCK can end any client's
     * blocked read: it takes a client id, not a key).
     */
    public static final String WORKER_COMMANDS = PUBLISHER_COMMANDS + " " + workerDataCommands();

    /** {@link #WORKER_COMMANDS} on Redis 6.2 (or with {@code ScriptMode.EVAL}): EVAL, EVALSHA instead of FCALL. */
    public static final String WORKER_COMMANDS_62 = PUBLISHER_COMMANDS_62 + " " + workerDataCommands();

    /**
     * Who loads runbus's function library ({@code runbus migrate}, or {@code ScriptLibrary.load}) on Redis 7 and
     * later: INFO for the version check, FUNCTION LOAD (answered "already exists" where it is loaded). On a
     * cluster, with {@link #CLUSTER_EXTRA_COMMANDS}.
     */
    public static final String MIGRATE_COMMANDS = "-@all +info +function|load";

    private static String workerDataCommands() {
        return "+xreadgroup +xread +xack +xclaim +xautoclaim +xpending +xrange +xrevrange +xlen +xtrim"
                + " +xgroup|create +xgroup|delconsumer +xinfo|groups +xinfo|consumers +xinfo|stream"
                + " +client|id +client|unblock"
                + " +type +del +pexpire +pttl +hget +hset +hdel +hmget +hlen +hscan +zrange +zrangebyscore +zrem +zremrangebyscore"
                + " +zcard +smembers";
    }

    /**
     * What a client of a Redis Cluster needs on top of either list: Lettuce reads the cluster's topology with
     * CLUSTER NODES (and INFO, which both lists hold) from the seeds, and again every few seconds; on the
     * connections a worker opens to single nodes (for its blocking reads) it also sends CLUSTER MYID and
     * CLIENT SETNAME, as Redis's ACL LOG shows (they name only the node and the connection itself).
     */
    public static final String CLUSTER_EXTRA_COMMANDS = "+cluster|nodes +cluster|myid +client|setname";

    /**
     * What a publisher needs on top of its list to publish messages with a flow key (flow.lua {@code park}, which
     * admits what has room): INCR the waiting order, HGET, HMGET the caps and rates, ZLEXCOUNT a key's slots,
     * ZRANGEBYLEX, ZREM its queue, XRANGE, XDEL the waiting entry it lets in, HSET the key's rate state and sub-key
     * tags (HDEL a sub-key's tag with its last waiting entry); under a topic
     * cap, ZCARD the topic's slots and ZRANGE the key whose turn it is.
     */
    public static final String FLOW_PUBLISHER_EXTRA_COMMANDS =
            "+incr +hget +hmget +hset +hdel +zlexcount +zrangebylex +zrem +xrange +xdel +zcard +zrange";

    /**
     * What a worker needs on top of its list for flow control (a subscription with {@code flowCap} or
     * {@code flowRate}, and publishing with a flow key): INCR, ZLEXCOUNT, ZRANGEBYLEX and XDEL (the others are in its
     * list already). XDEL also lets the worker purge dead letters, otherwise an operator's right.
     */
    public static final String FLOW_WORKER_EXTRA_COMMANDS = "+incr +zlexcount +zrangebylex +xdel";

    /** An ACL line that adds {@code commands} to an existing user: {@code ACL SETUSER <user> <commands>}. */
    public static String addLine(String user, String commands) {
        return "ACL SETUSER " + user + " " + commands;
    }

    /**
     * What an operator's tools need on top of a worker's: purging dead letters (XDEL), deleting a group
     * (XGROUP DESTROY) and deleting every key of a prefix (SCAN).
     */
    public static final String OPERATOR_EXTRA_COMMANDS = "+xdel +xgroup|destroy +scan";

    private RedisAcl() {
    }

    /**
     * The rules of an ACL user: enabled, with this password, keys under the prefix only, no Pub/Sub channels,
     * and these commands.
     */
    public static List<String> rules(String password, String keyPrefix, String commands) {
        List<String> rules = new ArrayList<>(List.of("reset", "on", ">" + password, "~" + keyPrefix + ":*",
                "resetchannels"));
        rules.addAll(List.of(commands.split(" ")));
        return rules;
    }

    /** The whole command an operator types: {@code ACL SETUSER name rule rule …}. */
    public static String setUserLine(String user, String password, String keyPrefix, String commands) {
        return "ACL SETUSER " + user + " " + String.join(" ", rules(password, keyPrefix, commands));
    }

    /** Creates (or replaces) the user on the server {@code admin} is connected to. */
    public static void setUser(RedisClusterCommands<String, String> admin, String user, String password,
                               String keyPrefix, String commands) {
        List<String> args = new ArrayList<>(List.of("SETUSER", user));
        args.addAll(rules(password, keyPrefix, commands));
        admin.dispatch(io.lettuce.core.protocol.CommandType.ACL, new io.lettuce.core.output.StatusOutput<>(
                io.lettuce.core.codec.StringCodec.UTF8), new io.lettuce.core.protocol.CommandArgs<>(
                io.lettuce.core.codec.StringCodec.UTF8).addValues(args));
    }
}
