package dev.runbus.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The hash tags of a partitioned topic's partitions, chosen so that the partitions spread evenly over a Redis
 * Cluster's slots, whatever the topic is called.
 *
 * <p>Redis Cluster puts a key in slot {@code CRC16(tag) mod 16384}. Tags such as {@code orders#0},
 * {@code orders#1}, … land on random slots, so a topic of 6 partitions on 3 masters leaves a master without a
 * partition about one time in ten. Instead, partition {@code p} of {@code n} aims at slot
 * {@code (CRC16(topic) + floor(p * 16384 / n)) mod 16384}: the targets are evenly spaced round the ring, so any
 * run of at least {@code ceil(16384 / n)} consecutive slots holds one of them. A master holding such a run
 * (the even split {@code redis-cli --cluster create} makes gives each master 16384 / masters) holds a
 * partition whenever {@code n >= masters}. The topic's own CRC16 turns the ring, so topics of the same partition
 * count do not all pile onto the same slots.
 *
 * <p>The tag is {@code topic#p.k} for the smallest {@code k >= 0} whose tag hashes to the target slot exactly.
 * Searching costs about 16384 CRC16 steps of a few bytes per partition, once per topic and process (cached).
 * The wire format (docs/wire-format.md) gives vectors; any client computes the same tags.
 */
public final class SlotTags {

    public static final int SLOTS = 16384;
    private static final int[] TABLE = table();
    private static final Map<String, String[]> CACHE = new ConcurrentHashMap<>();

    private SlotTags() {
    }

    /** The hash tag of partition {@code p} of a topic of {@code count} partitions ({@code count > 1}). */
    public static String tag(String topic, int p, int count) {
        String[] tags = CACHE.computeIfAbsent(count + "\n" + topic, k -> new String[count]);
        String tag = tags[p];
        if (tag == null) {
            tag = search(topic, p, count);
            tags[p] = tag;
        }
        return tag;
    }

    /** The slot partition {@code p} of {@code count} aims at. */
    public static int targetSlot(String topic, int p, int count) {
        return (int) ((slot(topic) + (long) p * SLOTS / count) % SLOTS);
    }

    /** Redis Cluster's slot of a hash tag (the tag itself: no braces are looked for). */
    public static int slot(String tag) {
        return update(0, tag.getBytes(StandardCharsets.UTF_8)) & (SLOTS - 1);
    }

    private static String search(String topic, int p, int count) {
        int target = targetSlot(topic, p, count);
        String stem = topic + "#" + p + ".";
        int prefix = update(0, stem.getBytes(StandardCharsets.UTF_8));
        byte[] digits = {'0', 0, 0, 0, 0, 0, 0, 0, 0, 0};
        int len = 1;
        while (len < digits.length) {
            if ((update(prefix, digits, len) & (SLOTS - 1)) == target) {
                return stem + new String(digits, 0, len, StandardCharsets.US_ASCII);
            }
            len = increment(digits, len);
        }
        throw new IllegalStateException("no tag found for partition " + p + " of " + topic); // CRC16 is onto
    }

    /** Adds one to the decimal number in {@code digits[0, len)}; returns its new length. */
    private static int increment(byte[] digits, int len) {
        for (int i = len - 1; i >= 0; i--) {
            if (digits[i] != '9') {
                digits[i]++;
                return len;
            }
            digits[i] = '0';
        }
        System.arraycopy(digits, 0, digits, 1, len);
        digits[0] = '1';
        return len + 1;
    }

    private static int update(int crc, byte[] bytes) {
        return update(crc, bytes, bytes.length);
    }

    /** CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), the one Redis Cluster uses, continued over bytes. */
    private static int update(int crc, byte[] bytes, int len) {
        for (int i = 0; i < len; i++) {
            crc = ((crc << 8) ^ TABLE[((crc >>> 8) ^ bytes[i]) & 0xff]) & 0xffff;
        }
        return crc;
    }

    private static int[] table() {
        int[] t = new int[256];
        for (int i = 0; i < 256; i++) {
            int c = i << 8;
            for (int b = 0; b < 8; b++) {
                c = (c & 0x8000) != 0 ? (c << 1) ^ 0x1021 : c << 1;
            }
            t[i] = c & 0xffff;
        }
        return t;
    }
}
