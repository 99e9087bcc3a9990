package dev.runbus.internal.admin;

import dev.runbus.Inspector;
import dev.runbus.internal.redis.Calls;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The flow keys of a topic that have messages waiting or slots held, in the order of their names, with their counts
 * and their own limits (docs/flow-control.md): read from each partition's waiting order and holds, where a key's
 * members start with the key and a NUL, so the next key after {@code k} is the first member from {@code k \1} on.
 */
final class FlowKeyReader {

    private final RedisClusterCommands<String, byte[]> redis;
    private final Keys keys;

    FlowKeyReader(RedisClusterCommands<String, byte[]> redis, Keys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /** At most {@code max} keys, the first by name after {@code after} (null: from the first). */
    List<Inspector.FlowKeyInfo> keys(String topic, Partitions partitions, String after, int max) {
        // By their UTF-8 bytes, as Redis orders them (UTF-16 order differs above U+FFFF): pages then meet.
        TreeSet<String> names = new TreeSet<>(FlowKeyReader::byBytes);
        for (String name : partitions.names()) {
            String[] flow = keys.flow(name);
            names.addAll(distinct(flow[Keys.FLOW_QUEUE], after, max));
            names.addAll(distinct(flow[Keys.FLOW_HELD], after, max));
        }
        List<Inspector.FlowKeyInfo> out = new ArrayList<>();
        for (String key : names) {
            if (out.size() == max) {
                break;
            }
            out.add(info(topic, partitions, key));
        }
        return out;
    }

    private Inspector.FlowKeyInfo info(String topic, Partitions partitions, String key) {
        String[] flow = keys.flow(partitions.name(partitions.partitionFor(key)));
        Range<byte[]> members = MessageIdReader.membersOf(key);
        long waiting = Calls.call("counting the waiting entries of " + key, () -> redis.zlexcount(
                flow[Keys.FLOW_QUEUE], members));
        long held = Calls.call("counting the slots of " + key, () -> redis.zlexcount(flow[Keys.FLOW_HELD], members));
        List<io.lettuce.core.KeyValue<String, byte[]>> own = Calls.call("reading the limits of " + key,
                () -> redis.hmget(flow[Keys.FLOW_CAPS], key, "\0rate\0" + key, "\0burst\0" + key, "\0weight\0" + key));
        // Leniently: a value written by hand is shown as none of its own rather than failing the page.
        Double cap = number(own.get(0));
        Double interval = number(own.get(1));
        Double burst = number(own.get(2));
        Double ratePerSecond = interval == null ? null : interval > 0 ? 1000 / interval : Double.POSITIVE_INFINITY;
        return new Inspector.FlowKeyInfo(topic, key, waiting, held, cap == null ? null : cap.intValue(),
                ratePerSecond, interval == null || burst == null ? null : burst.intValue(), number(own.get(3)));
    }

    /** The field as a number, or null when it is absent or no number. */
    private static Double number(io.lettuce.core.KeyValue<String, byte[]> kv) {
        if (!kv.hasValue()) {
            return null;
        }
        try {
            double v = Double.parseDouble(text(kv));
            return Double.isNaN(v) ? null : v;
        } catch (NumberFormatException written) {
            return null;
        }
    }

    private static int byBytes(String a, String b) {
        return java.util.Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }

    /** The first {@code max} distinct keys among the members of {@code set} after {@code after}, one read each. */
    private List<String> distinct(String set, String after, int max) {
        List<String> out = new ArrayList<>();
        String last = after;
        while (out.size() < max) {
            Range<byte[]> from = last == null ? Range.unbounded() : Range.from(
                    Range.Boundary.including((last + "\1").getBytes(StandardCharsets.UTF_8)),
                    Range.Boundary.unbounded());
            List<byte[]> first = Calls.call("reading the flow keys of " + set,
                    () -> redis.zrangebylex(set, from, Limit.create(0, 1)));
            if (first.isEmpty()) {
                break;
            }
            byte[] member = first.get(0);
            int nul = 0;
            while (nul < member.length && member[nul] != 0) {
                nul++;
            }
            last = new String(member, 0, nul, StandardCharsets.UTF_8);
            out.add(last);
        }
        return out;
    }

    private static String text(io.lettuce.core.KeyValue<String, byte[]> kv) {
        return new String(kv.getValue(), StandardCharsets.UTF_8);
    }
}
