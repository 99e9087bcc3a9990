package dev.runbus.internal.admin;

import dev.runbus.Inspector.PartitionInfo;
import dev.runbus.internal.ordered.LeaseValue;
import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.Replies;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The figures of each partition of a topic for one group ({@link dev.runbus.Inspector#partitions}): its stream's
 * length, the group's pending entries and lag there (XINFO GROUPS), and for an ordered group the partition's
 * lease. A lease's value is {@code "<fencing token> <consumer> <acquired at, epoch ms>"} and its expiry the key's
 * PTTL; its age is measured on the Redis clock, as it was written.
 */
final class PartitionReport {

    private final RedisClusterCommands<String, byte[]> redis;
    private final Keys keys;

    PartitionReport(RedisClusterCommands<String, byte[]> redis, Keys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    List<PartitionInfo> of(Partitions partitions, String group) {
        long now = Calls.call("reading the Redis clock", this::redisNowMillis);
        List<PartitionInfo> out = new ArrayList<>(partitions.count());
        for (int p = 0; p < partitions.count(); p++) {
            out.add(partition(partitions, p, group, now));
        }
        return out;
    }

    private PartitionInfo partition(Partitions partitions, int p, String group, long now) {
        String name = partitions.name(p);
        String stream = keys.stream(name);
        long length = Calls.call("reading the length of " + stream, () -> redis.xlen(stream));
        long pending = 0;
        long lag = -1; // no group there (or no stream): Redis cannot tell
        String lastId = null;
        String lastDelivered = null;
        String lastPending = null;
        if (length > 0 || Calls.call("reading stream " + stream, () -> redis.exists(stream)) > 0) {
            for (Object g : Calls.call("reading groups of " + stream, () -> redis.xinfoGroups(stream))) {
                Map<String, Object> info = Replies.info(g);
                if (group.equals(Replies.str(info.get("name")))) {
                    pending = Replies.num(info.get("pending"));
                    Object l = info.get("lag");
                    lag = l == null ? -1 : Replies.num(l);
                    lastDelivered = Replies.str(info.get("last-delivered-id"));
                }
            }
            List<StreamMessage<String, byte[]>> newest = Calls.call("reading the newest entry of " + stream,
                    () -> redis.xrevrange(stream, Range.create("-", "+"), Limit.from(1)));
            lastId = newest.isEmpty() ? null : newest.get(0).getId();
            if (pending > 0) {
                io.lettuce.core.models.stream.PendingMessages summary = Calls.call("reading the pending list of "
                        + stream, () -> redis.xpending(stream, group));
                lastPending = summary.getMessageIds().getUpper().getValue();
            }
        }
        String leaseKey = keys.lease(name, group);
        byte[] lease = Calls.call("reading lease " + leaseKey, () -> redis.get(leaseKey));
        if (lease == null) {
            return new PartitionInfo(p, stream, length, pending, lag, null, 0, -1, -1, lastId, lastDelivered,
                    lastPending);
        }
        long expiresIn = Calls.call("reading the expiry of " + leaseKey, () -> redis.pttl(leaseKey));
        LeaseValue value = LeaseValue.parse(Replies.str(lease));
        long acquiredAt = value.acquiredAtMillis();
        return new PartitionInfo(p, stream, length, pending, lag, value.consumer(), value.token(),
                acquiredAt < 0 ? -1 : Math.max(0, now - acquiredAt), expiresIn < 0 ? -1 : expiresIn, lastId,
                lastDelivered, lastPending);
    }

    private long redisNowMillis() {
        List<byte[]> t = redis.time();
        return Long.parseLong(Replies.str(t.get(0))) * 1000 + Long.parseLong(Replies.str(t.get(1))) / 1000;
    }
}
