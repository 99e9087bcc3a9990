package dev.runbus.internal.admin;

import dev.runbus.Inspector.MessageIds;
import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Replies;
import dev.runbus.internal.redis.WireFormat;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.models.stream.PendingMessage;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The message ids ({@code id} field) of a partition's entries where a message can be on its way to a handler: waiting
 * outside the stream for a flow slot, in the stream not delivered to a group yet, or in the group's pending list. For
 * whoever must tell whether one message is still on its way (the runs' sweeper), each read bounded: a list that says
 * it is incomplete holds the first {@code max} only.
 */
final class MessageIdReader {

    private final RedisClusterCommands<String, byte[]> redis;

    MessageIdReader(RedisClusterCommands<String, byte[]> redis) {
        this.redis = redis;
    }

    /** The entries of {@code group}'s pending list in {@code stream} from {@code fromMillis} on, oldest first. */
    MessageIds pending(String stream, String group, long fromMillis, int max) {
        List<PendingMessage> raw = Calls.call("reading pending entries of " + stream + "/" + group,
                () -> redis.xpending(stream, group, Range.create(Math.max(0, fromMillis) + "-0", "+"), Limit.from(max)));
        List<String> ids = new ArrayList<>(raw.size());
        for (PendingMessage m : raw) {
            String id = messageIdAt(stream, m.getId());
            if (id != null) { // trimmed while pending: no message to tell
                ids.add(id);
            }
        }
        return new MessageIds(ids, raw.size() < max);
    }

    /** The entries of {@code stream} after the last one delivered to {@code group} (all of them without the group). */
    MessageIds undelivered(String stream, String group, int max) {
        if (Calls.call("reading stream " + stream, () -> redis.exists(stream)) == 0) {
            return new MessageIds(List.of(), true);
        }
        String after = null;
        for (Object g : Calls.call("reading groups of " + stream, () -> redis.xinfoGroups(stream))) {
            Map<String, Object> info = Replies.info(g);
            if (group.equals(Replies.str(info.get("name")))) {
                after = Replies.str(info.get("last-delivered-id"));
            }
        }
        Range<String> range = after == null ? Range.create("-", "+")
                : Range.from(Range.Boundary.excluding(after), Range.Boundary.unbounded());
        List<StreamMessage<String, byte[]>> entries = Calls.call("reading undelivered entries of " + stream,
                () -> redis.xrange(stream, range, Limit.from(max)));
        return new MessageIds(idsOf(entries), entries.size() < max);
    }

    /** The messages of {@code flowKey} waiting outside the stream, in the partition whose flow keys are {@code flow}. */
    MessageIds flowWaiting(String[] flow, String flowKey, int max) {
        String queue = flow[Keys.FLOW_QUEUE];
        String parked = flow[Keys.FLOW_PARKED];
        Range<byte[]> members = membersOf(flowKey);
        List<byte[]> raw = Calls.call("reading the waiting entries of flow key " + flowKey,
                () -> redis.zrangebylex(queue, members, Limit.create(0, max)));
        List<String> ids = new ArrayList<>(raw.size());
        for (byte[] member : raw) {
            String m = new String(member, StandardCharsets.UTF_8);
            String parkedId = m.substring(m.lastIndexOf('\0') + 1); // key NUL seq NUL parked-id
            String id = messageIdAt(parked, parkedId);
            if (id != null) {
                ids.add(id);
            }
        }
        return new MessageIds(ids, raw.size() < max);
    }

    /** A flow key's members of the sorted sets of flow.lua ({@code <key> NUL ...}): from key NUL, below key \1. */
    static Range<byte[]> membersOf(String flowKey) {
        return Range.from(Range.Boundary.including((flowKey + "\0").getBytes(StandardCharsets.UTF_8)),
                Range.Boundary.excluding((flowKey + "\1").getBytes(StandardCharsets.UTF_8)));
    }

    private String messageIdAt(String stream, String streamId) {
        List<StreamMessage<String, byte[]>> entry = Calls.call("reading entry " + streamId + " of " + stream,
                () -> redis.xrange(stream, Range.create(streamId, streamId)));
        List<String> ids = idsOf(entry);
        return ids.isEmpty() ? null : ids.get(0);
    }

    private static List<String> idsOf(List<StreamMessage<String, byte[]>> entries) {
        List<String> ids = new ArrayList<>(entries.size());
        for (StreamMessage<String, byte[]> e : entries) {
            byte[] id = e.getBody().get(WireFormat.ID);
            if (id != null) {
                ids.add(new String(id, StandardCharsets.UTF_8));
            }
        }
        return ids;
    }
}
