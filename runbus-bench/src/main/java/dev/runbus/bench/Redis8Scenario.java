package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Scenario 11, on Redis 8.2 or later: the two places where runbus sends other commands by server version, each on
 * the server's own path and on the path older servers get ({@code runbus.redis.commandsUpTo=8.0}), in a random
 * order within each round. A publish: {@code XADD … IDMP} on 8.6, plain {@code XADD} otherwise, in batches of
 * {@value #BATCH} ({@code publishAll}) and one at a time from one thread. A retention round: {@code retention.lua}
 * on one stream of acknowledged entries with {@value #GROUPS} groups: the group scan and {@code XTRIM MINID} on both
 * paths; and on the same stream with its oldest entry stuck pending in one group, where the script adds {@code XTRIM
 * … ACKED} on 8.2 (trimming every entry but the stuck one) and the older path trims nothing. A delivery and a takeover send the same commands on both paths (the drain and
 * latency scenarios measure the delivery with the contender "runbus, Redis 8.0 path").
 */
final class Redis8Scenario {

    static final String OWN = "Redis 8 path";
    static final String OLDER = "Redis 8.0 path";
    static final int BATCH = 100;
    static final int GROUPS = 4;

    /**
     * Per path ({@link #OWN}, {@link #OLDER}), one value per round: batch and single publishes in messages per second,
     * and the retention round's time in milliseconds, with nothing pending and with the oldest entry stuck pending.
     */
    record Result(String server, int batchMessages, int singleMessages, int retentionEntries, int groups,
                  Map<String, List<Double>> batchRates, Map<String, List<Double>> singleRates,
                  Map<String, List<Double>> retentionMillis, Map<String, List<Double>> stuckRetentionMillis)
            implements java.io.Serializable {
    }

    private Redis8Scenario() {
    }

    /** Null, said on the progress lines, on a server older than Redis 8.2: both paths are the same there. */
    static Result run(Env env) throws Exception {
        if (!env.admin.hasRedis8Commands()) {
            Progress.say("redis8: skipped: the server is Redis %s, and only 8.2 and later get other commands",
                    env.admin.serverVersion());
            return null;
        }
        int batchMessages = env.sizes.drainMessages() / 2;
        int singleMessages = env.sizes.drainMessages() / 20;
        int retentionEntries = env.sizes.drainMessages() / 4;
        String script = retentionScript();
        Map<String, Bus> buses = new LinkedHashMap<>();
        Map<String, List<Double>> batch = new LinkedHashMap<>();
        Map<String, List<Double>> single = new LinkedHashMap<>();
        Map<String, List<Double>> retention = new LinkedHashMap<>();
        Map<String, List<Double>> stuck = new LinkedHashMap<>();
        for (String path : List.of(OWN, OLDER)) {
            batch.put(path, new ArrayList<>());
            single.put(path, new ArrayList<>());
            retention.put(path, new ArrayList<>());
            stuck.put(path, new ArrayList<>());
        }
        try (StatefulRedisConnection<String, String> connection = env.admin.client().connect()) {
            RedisCommands<String, String> redis = connection.sync();
            BusConfig.Builder own = BusConfig.builder(env.options.redisUri()).keyPrefix(env.prefix("redis8-own"))
                    .retention(false);
            buses.put(OWN, Bus.connect(own.build()));
            BusConfig.Builder older = BusConfig.builder(env.options.redisUri()).keyPrefix(env.prefix("redis8-80"))
                    .retention(false);
            buses.put(OLDER, RunbusContender.connectCapped(older.build(), RunbusContender.OLDER_PATH_VERSION));
            Progress.say("redis8: warm-up");
            for (int i = 0; i < 3; i++) {
                for (String path : buses.keySet()) {
                    publishBatches(buses.get(path), "warmup", batchMessages / 4);
                    publishOneByOne(buses.get(path), "warmup", singleMessages / 4);
                    retentionRound(env, redis, script, path, "warmup", retentionEntries / 4, false);
                    retentionRound(env, redis, script, path, "warmup-stuck", retentionEntries / 4, true);
                }
                deleteStreams(env);
            }
            for (int round = 0; round < env.options.repeats(); round++) {
                for (String path : env.order.of(List.of(OWN, OLDER), "redis8", round, p -> p)) {
                    Bus bus = buses.get(path);
                    double b = publishBatches(bus, "batch-" + round, batchMessages);
                    double s = publishOneByOne(bus, "single-" + round, singleMessages);
                    double r = retentionRound(env, redis, script, path, "retention-" + round, retentionEntries,
                            false);
                    double st = retentionRound(env, redis, script, path, "stuck-" + round, retentionEntries, true);
                    batch.get(path).add(b);
                    single.get(path).add(s);
                    retention.get(path).add(r);
                    stuck.get(path).add(st);
                    Progress.say("redis8 round %d/%d, %-14s publishAll %,9.0f msg/s, publish %,7.0f msg/s,"
                            + " retention of %,d entries (%d groups) %,.1f ms, with one stuck %,.1f ms", round + 1,
                            env.options.repeats(), path, b, s, retentionEntries, GROUPS, r, st);
                    deleteStreams(env);
                }
            }
        } finally {
            for (Bus bus : buses.values()) {
                bus.close();
            }
            deleteStreams(env);
        }
        return new Result(env.admin.serverVersion(), batchMessages, singleMessages, retentionEntries, GROUPS, batch,
                single, retention, stuck);
    }

    /** Messages per second of {@code publishAll} in batches of {@value #BATCH}, from one thread. */
    private static double publishBatches(Bus bus, String topic, int messages) {
        List<Message> batch = new ArrayList<>(BATCH);
        for (int i = 0; i < BATCH; i++) {
            batch.add(Message.builder("bench", Payloads.make(Payloads.now(), false)).build());
        }
        long began = System.nanoTime();
        for (int sent = 0; sent < messages; sent += BATCH) {
            bus.publisher().publishAll(topic, batch);
        }
        return messages / ((System.nanoTime() - began) / 1e9);
    }

    /** Messages per second of {@code publish}, one at a time from one thread: each waits for its reply. */
    private static double publishOneByOne(Bus bus, String topic, int messages) {
        Message m = Message.builder("bench", Payloads.make(Payloads.now(), false)).build();
        long began = System.nanoTime();
        for (int i = 0; i < messages; i++) {
            bus.publisher().publish(topic, m);
        }
        return messages / ((System.nanoTime() - began) / 1e9);
    }

    /**
     * Milliseconds of one retention round ({@code retention.lua}, retention age 0, nothing kept by count) on a stream
     * of {@code entries} entries that {@value #GROUPS} groups have all read and acknowledged (created at its end),
     * except, when {@code stuck}, the oldest entry, which one group has read and not acknowledged.
     */
    private static double retentionRound(Env env, RedisCommands<String, String> redis, String script, String path,
                                         String name, int entries, boolean stuck) {
        String key = env.prefix("redis8-retention") + ":" + name + ":" + (path.equals(OWN) ? "own" : "80");
        env.producer.publish(key, 0, entries, i -> false);
        for (int g = 0; g < GROUPS; g++) {
            redis.xgroupCreate(XReadArgs.StreamOffset.from(key, stuck && g == 0 ? "0" : "$"), "g" + g);
        }
        if (stuck) { // g0 reads the oldest entry, then moves on to the end; the entry stays in its pending list
            redis.xreadgroup(io.lettuce.core.Consumer.from("g0", "c"), XReadArgs.Builder.count(1),
                    XReadArgs.StreamOffset.lastConsumed(key));
            redis.xgroupSetid(XReadArgs.StreamOffset.from(key, "$"), "g0");
        }
        long expected = !stuck ? entries : path.equals(OWN) ? entries - 1 : 0;
        long began = System.nanoTime();
        List<Object> reply = redis.eval(script, ScriptOutputType.MULTI, new String[] {key}, "0", "trim", "0",
                path.equals(OWN) ? "acked" : "scan");
        double millis = (System.nanoTime() - began) / 1e6;
        long trimmed = ((Number) reply.get(0)).longValue();
        if (trimmed != expected) {
            throw new IllegalStateException("retention on the " + path + (stuck ? " with one entry stuck" : "")
                    + " trimmed " + trimmed + " of " + entries + " entries, not " + expected);
        }
        redis.unlink(key);
        return millis;
    }

    private static void deleteStreams(Env env) {
        env.admin.deleteMatching(env.prefix("redis8") + "*");
    }

    /** runbus's retention script, as the bus sends it (as a function, FCALL, on Redis 7 and later). */
    private static String retentionScript() throws IOException {
        try (InputStream in = Bus.class.getClassLoader().getResourceAsStream("dev/runbus/lua/retention.lua")) {
            if (in == null) {
                throw new IllegalStateException("dev/runbus/lua/retention.lua is not on the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
