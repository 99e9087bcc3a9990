package dev.runbus.internal.redis;

import dev.runbus.Partitioner;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A topic and its partition count: the name of each partition, which {@link Keys} builds its keys from, the
 * partition of a message key, and the ids runbus hands out for entries of the topic.
 *
 * <p>A topic of one partition is exactly a plain topic: its partition's name is the topic and its ids are
 * Redis stream ids. Partition {@code p} of a topic of several is named {@code topic#p.k} ({@link #name}), and an
 * id of one of its entries is the stream id with the partition after an {@code @}: {@code 1700000000000-0@3}.
 * Stream ids of different partitions can be equal; these cannot. The time part stays in front, so such an id
 * still reads as a time.
 */
public record Partitions(String topic, int count) {

    private static final AtomicInteger SPREAD = new AtomicInteger();

    public Partitions {
        Keys.checkTopic(topic);
        Partitioner.checkCount(count);
    }

    /** The one partition of a plain topic. */
    public static Partitions single(String topic) {
        return new Partitions(topic, 1);
    }

    public boolean partitioned() {
        return count > 1;
    }

    /**
     * The name partition {@code p}'s keys are built from (its hash tag): the topic for a plain topic, else
     * {@code topic#p.k}, with {@code k} chosen to spread the partitions over a cluster's slots ({@link SlotTags}).
     */
    public String name(int p) {
        return count == 1 ? topic : SlotTags.tag(topic, p, count);
    }

    public List<String> names() {
        List<String> names = new ArrayList<>(count);
        for (int p = 0; p < count; p++) {
            names.add(name(p));
        }
        return names;
    }

    /** The partition of a message: by its key, or for a message without a key the next in turn. */
    public int partitionFor(String key) {
        if (count == 1) {
            return 0;
        }
        return key != null ? Partitioner.partitionOf(key, count) : Math.floorMod(SPREAD.getAndIncrement(), count);
    }

    /** The id runbus hands out for entry {@code streamId} of partition {@code p}. */
    public String qualify(int p, String streamId) {
        return count == 1 ? streamId : streamId + "@" + p;
    }

    /** An entry's partition and stream id. */
    public record Id(int partition, String streamId) {
    }

    /**
     * The order of a topic's entries across its partitions: by stream id, numerically (time, then sequence), then
     * by partition number. Stream ids of different partitions are not ordered by Redis; this order is only that
     * of their times, the one listings use.
     */
    public static final Comparator<Id> ORDER = Comparator.<Id, Long>comparing(i -> part(i.streamId(), 0),
                    Long::compareUnsigned)
            .thenComparing(i -> part(i.streamId(), 1), Long::compareUnsigned).thenComparingInt(Id::partition);

    /** Part {@code n} (0 time, 1 sequence) of a stream id {@code <ms>-<seq>}; a missing sequence is 0. */
    private static long part(String streamId, int n) {
        int dash = streamId.indexOf('-');
        if (n == 0) {
            return Long.parseUnsignedLong(dash < 0 ? streamId : streamId.substring(0, dash));
        }
        return dash < 0 ? 0 : Long.parseUnsignedLong(streamId.substring(dash + 1));
    }

    /**
     * Reads an id handed out by {@link #qualify}; for a topic of several partitions it must name one of them.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public Id parse(String id) {
        if (id == null || id.isEmpty()) {
            throw new IllegalArgumentException("an entry id of topic " + topic + " must not be empty");
        }
        int at = id.lastIndexOf('@');
        if (count == 1) {
            if (at >= 0) {
                throw new IllegalArgumentException("topic " + topic + " has one partition: its ids carry none, got '"
                        + id + "'");
            }
            return new Id(0, id);
        }
        if (at < 1) {
            throw new IllegalArgumentException("topic " + topic + " has " + count + " partitions: an id names its "
                    + "partition, as in 1700000000000-0@3; got '" + id + "'");
        }
        int p;
        try {
            p = Integer.parseInt(id.substring(at + 1));
        } catch (NumberFormatException e) {
            p = -1;
        }
        if (p < 0 || p >= count) {
            throw new IllegalArgumentException("topic " + topic + " has partitions 0 to " + (count - 1) + "; id '"
                    + id + "' names another");
        }
        return new Id(p, id.substring(0, at));
    }
}
