package dev.runbus.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reading raw Redis replies (script results, XINFO) whose bulk strings arrive as bytes. */
public final class Replies {

    private Replies() {
    }

    public static String str(Object o) {
        if (o == null) {
            return null;
        }
        if (o instanceof byte[]) {
            return new String((byte[]) o, StandardCharsets.UTF_8);
        }
        if (o instanceof java.nio.ByteBuffer) {
            return StandardCharsets.UTF_8.decode(((java.nio.ByteBuffer) o).duplicate()).toString();
        }
        return o.toString();
    }

    public static long num(Object o) {
        if (o == null) {
            return -1;
        }
        if (o instanceof Number) {
            return ((Number) o).longValue();
        }
        return Long.parseLong(str(o));
    }

    @SuppressWarnings("unchecked")
    public static List<Object> list(Object o) {
        return o == null ? List.of() : (List<Object>) o;
    }

    /** A flat {@code [name, value, name, value, ...]} list of stream fields as a map, keeping order. */
    static Map<String, byte[]> fields(Object flat) {
        List<Object> l = list(flat);
        Map<String, byte[]> m = new LinkedHashMap<>(l.size());
        for (int i = 0; i + 1 < l.size(); i += 2) {
            Object v = l.get(i + 1);
            m.put(str(l.get(i)), v instanceof byte[] ? (byte[]) v : v == null ? null : WireFormat.utf8(str(v)));
        }
        return m;
    }

    /** A flat {@code [name, value, ...]} reply (XINFO) as a map of name to raw value. */
    public static Map<String, Object> info(Object flat) {
        List<Object> l = list(flat);
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < l.size(); i += 2) {
            m.put(str(l.get(i)), l.get(i + 1));
        }
        return m;
    }

    /** A list of ids (or names) as strings. */
    public static List<String> ids(Object reply) {
        List<String> out = new ArrayList<>();
        for (Object o : list(reply)) {
            out.add(str(o));
        }
        return out;
    }

    /**
     * The entries of a script's reply, each {@code {id, {field, value, ...}[, deliveries[, previous owner]]}}, as
     * entries of {@code partition}; a missing delivery count is 1 (a first delivery), a missing owner
     * {@code owner}.
     */
    public static List<Entry> entries(int partition, Object reply, String owner) {
        List<Entry> out = new ArrayList<>();
        for (Object e : list(reply)) {
            List<Object> t = list(e);
            out.add(new Entry(partition, str(t.get(0)), fields(t.get(1)), t.size() > 2 ? num(t.get(2)) : 1,
                    t.size() > 3 ? str(t.get(3)) : owner));
        }
        return out;
    }
}
