package dev.runbus.internal.deadletter;

import dev.runbus.DeadLetter;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.WireFormat;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** Reads a dead-letter entry (its fields are in docs/wire-format.md) into a {@link DeadLetter}. */
public final class DeadLetterFields {

    static final String TOPIC = "dl:topic";
    static final String STREAM_ID = "dl:stream_id";
    static final String GROUP = "dl:group";
    static final String CONSUMER = "dl:consumer";
    static final String DELIVERIES = "dl:deliveries";
    static final String REASON = "dl:reason";
    static final String AT = "dl:at";

    private DeadLetterFields() {
    }

    /**
     * Decodes a dead-letter entry of partition {@code partition} without ever throwing: docs/wire-format.md lets
     * other tools write dead letters, and one entry that cannot be read must not stop a listing or a sweeper. A
     * missing text field reads as "", a missing or malformed {@code dl:deliveries} as 0, a missing or malformed
     * {@code dl:at} as the time in the dead letter's own id (when Redis added it); original fields that do not
     * decode give a placeholder message with no type, whose id is the original stream id (or the dead letter's
     * id). {@code id}, {@code replayedAs} and the stored original stream id are the partition's stream ids; the
     * dead letter carries them as {@link Partitions#qualify} hands them out.
     */
    public static DeadLetter decode(Partitions partitions, int partition, String id, Map<String, byte[]> fields,
                             String replayedAs) {
        Map<String, byte[]> original = new LinkedHashMap<>();
        fields.forEach((k, v) -> {
            if (!k.startsWith("dl:")) {
                original.put(k, v);
            }
        });
        String stored = text(fields, STREAM_ID);
        String streamId = stored.isEmpty() ? "" : partitions.qualify(partition, stored);
        String deadLetterId = partitions.qualify(partition, id);
        return new DeadLetter(deadLetterId, partitions.topic(), streamId, text(fields, GROUP), text(fields, CONSUMER),
                number(fields, DELIVERIES, 0), text(fields, REASON),
                Instant.ofEpochMilli(number(fields, AT, WireFormat.millisOf(id))),
                decodeLeniently(streamId.isEmpty() ? deadLetterId : streamId, original),
                Optional.ofNullable(replayedAs).map(r -> partitions.qualify(partition, r)));
    }

    /** An entry that could not be decoded was dead-lettered for that; reading it must still work. */
    private static dev.runbus.Message decodeLeniently(String streamId, Map<String, byte[]> fields) {
        try {
            return WireFormat.decode(streamId, fields);
        } catch (RuntimeException bad) {
            return WireFormat.placeholder(streamId);
        }
    }

    private static String text(Map<String, byte[]> fields, String name) {
        return WireFormat.text(fields.get(name), "");
    }

    private static long number(Map<String, byte[]> fields, String name, long otherwise) {
        try {
            return Long.parseLong(text(fields, name).trim());
        } catch (NumberFormatException notANumber) {
            return otherwise;
        }
    }
}
