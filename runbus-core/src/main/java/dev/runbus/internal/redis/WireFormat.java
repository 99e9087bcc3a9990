package dev.runbus.internal.redis;

import dev.runbus.Message;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The fields of a stream entry, so that programs in other languages can publish and consume
 * (docs/wire-format.md). Values are bytes; all but {@code payload} are UTF-8 text.
 */
public final class WireFormat {

    public static final String ID = "id";
    public static final String TYPE = "type";
    public static final String PAYLOAD = "payload";
    public static final String PUBLISHED_AT = "published_at";
    /** The message key; absent for a message without one. */
    public static final String KEY = "key";
    public static final String HEADER_PREFIX = "h:";
    /**
     * The flow key (docs/flow-control.md); absent for a message without one. An entry that waited for its key's slot
     * also carries {@link #FLOW_SEQ}, its place among its key's waiting entries.
     */
    public static final String FLOW_KEY = "flow_key";
    /** Set by flow.lua when an entry is parked: its place in its flow key's queue, kept if it is parked again. */
    public static final String FLOW_SEQ = "flow_seq";
    /**
     * Set by flow.lua when an entry enters the stream: the id it first waited under in the parked set, whose time is
     * when it was parked (Redis's clock, as the stream id's).
     */
    public static final String FLOW_PARKED = "flow_parked";
    /**
     * Set by flow.lua when an entry enters the stream under fair shares by handler time: what its admission charged
     * its key (ms, decimal), which the release corrects by the time its handler took.
     */
    public static final String FLOW_CHARGE = "flow_charge";
    /**
     * The message's priority, 0 to 9 (docs/flow-control.md); absent for the default, 4. Read by flow.lua to order a
     * key's waiting entries; ignored on an entry without a flow key.
     */
    public static final String PRIORITY = "priority";
    /**
     * The message's cost under flow control's rates and fair shares, 1 to 1,000,000 in decimal (docs/flow-control.md);
     * absent for 1. Read by flow.lua; ignored on an entry without a flow key.
     */
    public static final String COST = "cost";
    /**
     * The message's flow sub-key (docs/flow-control.md); absent for none. Read by flow.lua: a flow key's waiting
     * entries take turns by sub-key.
     */
    public static final String FLOW_SUB = "flow_sub";
    /** Set on a replayed dead letter: only this group handles the entry; other groups ack it unseen. */
    public static final String FOR_GROUP = "for_group";
    /**
     * Set on an entry a retry policy put back into the stream: the attempts made at the message before this entry,
     * so that the poison threshold counts across reschedules ({@link dev.runbus.Delivery#attempt()}).
     */
    public static final String ATTEMPTS = "attempts";

    private WireFormat() {
    }

    public static Map<String, byte[]> encode(Message m) {
        Map<String, byte[]> fields = new LinkedHashMap<>(8 + m.headers().size() * 2);
        fields.put(ID, utf8(m.id()));
        fields.put(TYPE, utf8(m.type()));
        fields.put(PAYLOAD, m.payload());
        fields.put(PUBLISHED_AT, utf8(Long.toString(m.publishedAt().toEpochMilli())));
        if (m.key() != null) {
            fields.put(KEY, utf8(m.key()));
        }
        if (m.flowKey() != null) {
            fields.put(FLOW_KEY, utf8(m.flowKey()));
            if (m.priority() != Message.DEFAULT_PRIORITY) {
                fields.put(PRIORITY, utf8(Integer.toString(m.priority())));
            }
            if (m.cost() != 1) {
                fields.put(COST, utf8(Integer.toString(m.cost())));
            }
            if (m.flowSubKey() != null) {
                fields.put(FLOW_SUB, utf8(m.flowSubKey()));
            }
        }
        m.headers().forEach((name, value) -> fields.put(HEADER_PREFIX + name, utf8(value)));
        return fields;
    }

    /**
     * Decodes leniently, so that entries written by other programs are readable: a missing id becomes the
     * stream id, a missing type the empty string, a missing publish time the time in the stream id.
     * Unknown fields are ignored.
     */
    public static Message decode(String streamId, Map<String, byte[]> fields) {
        byte[] payload = fields.get(PAYLOAD);
        Message.Builder b = Message.builder(text(fields.get(TYPE), ""), payload == null ? new byte[0] : payload);
        b.id(text(fields.get(ID), streamId));
        b.publishedAt(Instant.ofEpochMilli(publishedAt(streamId, fields.get(PUBLISHED_AT))));
        String key = text(fields.get(KEY), null);
        if (key != null && key.length() <= 1000) {
            b.key(key);
        }
        String flowKey = flowKey(fields);
        if (flowKey != null) {
            b.flowKey(flowKey);
            b.priority(priority(fields));
            b.cost(cost(fields));
            String sub = text(fields.get(FLOW_SUB), null);
            if (sub != null && sub.indexOf('\0') < 0 && sub.getBytes(StandardCharsets.UTF_8).length
                    <= Message.MAX_FLOW_KEY_BYTES) { // written by another program: ignored when no publisher could
                b.flowSubKey(sub);
            }
        }
        for (Map.Entry<String, byte[]> f : fields.entrySet()) {
            String name = f.getKey();
            if (name.startsWith(HEADER_PREFIX) && name.length() > HEADER_PREFIX.length() && f.getValue() != null) {
                b.header(name.substring(HEADER_PREFIX.length()), text(f.getValue(), ""));
            }
        }
        return b.build();
    }

    /** The message of an entry handed out as {@code id} (its id when it has none); a placeholder if it does not decode. */
    public static Message decodeOrPlaceholder(String id, Entry e) {
        try {
            return decode(id, e.fields());
        } catch (RuntimeException bad) {
            return placeholder(id);
        }
    }

    /** Stands in for an entry whose fields cannot be decoded; the dead letter keeps the raw fields. */
    public static Message placeholder(String streamId) {
        return Message.builder("", new byte[0]).id(streamId).build();
    }

    /** The milliseconds part of a stream id such as {@code 1700000000000-0}. */
    public static long millisOf(String streamId) {
        int dash = streamId.indexOf('-');
        return Long.parseLong(dash < 0 ? streamId : streamId.substring(0, dash));
    }

    public static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The attempts made before this entry ({@link #ATTEMPTS}); 0 when absent or not a number, at most
     * {@link Integer#MAX_VALUE} (a value written by another program can be anything: adding a delivery count to it
     * must not overflow into a negative attempt that no poison threshold reaches).
     */
    public static long attemptsBefore(Map<String, byte[]> fields) {
        String value = text(fields.get(ATTEMPTS), null);
        if (value == null) {
            return 0;
        }
        try {
            return Math.min(Integer.MAX_VALUE, Math.max(0, Long.parseLong(value)));
        } catch (NumberFormatException written) { // by another program, in another format
            return 0;
        }
    }

    /** The entry's priority: the default when it has none or one a publisher could not have given. */
    public static int priority(Map<String, byte[]> fields) {
        String value = text(fields.get(PRIORITY), null);
        if (value == null || value.length() != 1 || value.charAt(0) < '0' || value.charAt(0) > '9') {
            return Message.DEFAULT_PRIORITY;
        }
        return value.charAt(0) - '0';
    }

    /** The entry's cost: 1 when it has none or one a publisher could not have given. */
    public static int cost(Map<String, byte[]> fields) {
        String value = text(fields.get(COST), null);
        if (value == null || !value.matches("[0-9]{1,7}")) {
            return 1;
        }
        int cost = Integer.parseInt(value);
        return cost >= 1 && cost <= Message.MAX_COST ? cost : 1;
    }

    /** The entry's flow key, or null when it has none or one a publisher could not have given (written by hand). */
    public static String flowKey(Map<String, byte[]> fields) {
        String flowKey = text(fields.get(FLOW_KEY), null);
        if (flowKey == null) {
            return null;
        }
        try {
            return Message.checkFlowKey(flowKey);
        } catch (IllegalArgumentException written) { // by another program
            return null;
        }
    }

    /** When the entry was parked (ms, Redis clock: the time of its {@link #FLOW_PARKED} id), or -1 when it was not. */
    public static long flowParkedMillis(Map<String, byte[]> fields) {
        String id = text(fields.get(FLOW_PARKED), null);
        try {
            return id == null ? -1 : millisOf(id);
        } catch (NumberFormatException written) { // by another program
            return -1;
        }
    }

    /** What the entry's admission charged its key ({@link #FLOW_CHARGE}, ms), or -1 when it charged nothing. */
    public static double flowChargeMillis(Map<String, byte[]> fields) {
        String charge = text(fields.get(FLOW_CHARGE), null);
        try {
            double ms = charge == null ? -1 : Double.parseDouble(charge);
            return ms >= 0 && Double.isFinite(ms) ? ms : -1;
        } catch (NumberFormatException written) { // by another program
            return -1;
        }
    }

    public static String text(byte[] value, String fallback) {
        return value == null || value.length == 0 ? fallback : new String(value, StandardCharsets.UTF_8);
    }

    private static long publishedAt(String streamId, byte[] value) {
        if (value != null) {
            try {
                return Long.parseLong(new String(value, StandardCharsets.UTF_8));
            } catch (NumberFormatException ignored) {
                // written by another program in another format: fall back to the stream id's time
            }
        }
        return millisOf(streamId);
    }
}
