package dev.runbus.bench;

import java.net.URI;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.StreamEntryID;
import redis.clients.jedis.params.XReadGroupParams;
import redis.clients.jedis.resps.StreamEntry;

/**
 * The naive loop many first versions look like: one Jedis connection per consumer, XREADGROUP COUNT 1
 * BLOCK 100, handle, one XACK per message.
 */
final class JedisNaiveContender implements Contender {

    static final String NAME = "naive Jedis";

    private final URI uri;
    private final String prefix;

    JedisNaiveContender(String redisUri, String prefix) {
        this.uri = URI.create(redisUri);
        this.prefix = prefix;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String describe() {
        return "Jedis 8.0 connection per consumer thread: XREADGROUP COUNT 1 BLOCK 100, then one XACK per message";
    }

    @Override
    public String keyPrefix() {
        return prefix;
    }

    @Override
    public Consumers start(Target target, int consumers, Probe probe) throws Exception {
        String key = target.streamKey();
        String group = target.group();
        Map<String, StreamEntryID> offset = Map.of(key, StreamEntryID.XREADGROUP_UNDELIVERED_ENTRY);
        java.util.List<AutoCloseable> connections = new java.util.ArrayList<>();
        ConsumerThreads threads = new ConsumerThreads("jedis", consumers, i -> {
            Jedis jedis = new Jedis(uri);
            connections.add(jedis);
            String me = "jedis-" + i;
            XReadGroupParams params = XReadGroupParams.xReadGroupParams().count(1).block(100);
            return () -> {
                List<Map.Entry<String, List<StreamEntry>>> read = jedis.xreadGroup(group, me, params, offset);
                if (read == null) {
                    return;
                }
                for (Map.Entry<String, List<StreamEntry>> stream : read) {
                    for (StreamEntry e : stream.getValue()) {
                        long enqueued = probe.timing() ? Payloads.enqueuedAt(e.getFields().get("payload")) : 0;
                        probe.handled();
                        jedis.xack(key, group, e.getID());
                        if (probe.timing()) {
                            probe.acked(enqueued, Payloads.now());
                        }
                    }
                }
            };
        });
        connections.forEach(threads::closing);
        return threads;
    }

    @Override
    public void close() {
    }
}
