package dev.runbus.testing;

import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.internal.scripts.ScriptCalls;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.testkit.RedisTarget;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;
import java.util.UUID;

/**
 * One topic of one partition on the local Redis, its stream created with group {@code g}, and the bus's scripts over
 * a link of their own: for tests of one script or one consumer part against a real server. Closing it closes the link
 * and deletes every key under its prefix.
 */
public final class OneStream implements AutoCloseable {

    public final Keys keys;
    public final Partitions partitions = Partitions.single("t");
    public final RedisLink link;
    public final Scripts scripts;
    /** Commands of the test's own, for setting up and checking. */
    public final RedisClusterCommands<String, String> redis;
    public final String stream;
    private final String prefix;

    /** {@code name} starts the key prefix, which a random part makes the test's own. */
    public OneStream(String name) {
        this.prefix = name + "-" + UUID.randomUUID();
        this.keys = new Keys(prefix);
        this.link = RedisLink.open(RedisTarget.local().uri(), Duration.ofSeconds(5));
        this.scripts = scriptsOver(link);
        this.redis = RedisTarget.local().redis();
        this.stream = keys.stream(partitions.name(0));
        redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g", XGroupCreateArgs.Builder.mkstream(true));
    }

    /** The bus's scripts for this topic's keys over {@code link}: the test's own, or one through a proxy. */
    public Scripts scriptsOver(RedisLink link) {
        return new Scripts(ScriptCalls.auto(link.sync()), link.sync(), link.async(), keys);
    }

    /** The partition's start record of group {@code g}. */
    public String starts() {
        return keys.starts(partitions.name(0), "g");
    }

    @Override
    public void close() {
        link.close();
        RedisTarget.local().deleteKeys(prefix);
    }
}
