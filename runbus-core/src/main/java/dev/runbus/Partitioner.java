package dev.runbus;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.zip.CRC32;

/**
 * Which partition of a topic a message key belongs to: {@code CRC-32(UTF-8 bytes of key) mod partitions}, with
 * the CRC-32 of IEEE 802.3 (the one of zlib, gzip and PNG; Python's {@code zlib.crc32}, Go's
 * {@code crc32.ChecksumIEEE}) read as an unsigned 32-bit number. Programs in other languages publishing keyed
 * messages compute the same partition; docs/wire-format.md lists test vectors.
 */
public final class Partitioner {

    /** The most partitions a topic may have. */
    public static final int MAX_PARTITIONS = 1024;

    private Partitioner() {
    }

    /** The partition of {@code key} in a topic of {@code partitions} partitions, from 0 to {@code partitions - 1}. */
    public static int partitionOf(String key, int partitions) {
        Objects.requireNonNull(key, "key");
        checkCount(partitions);
        CRC32 crc = new CRC32();
        crc.update(key.getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % partitions);
    }

    /** Throws unless {@code partitions} is from 1 to {@link #MAX_PARTITIONS}. */
    public static int checkCount(int partitions) {
        if (partitions < 1 || partitions > MAX_PARTITIONS) {
            throw new IllegalArgumentException("partitions must be from 1 to " + MAX_PARTITIONS + ", got " + partitions);
        }
        return partitions;
    }
}
