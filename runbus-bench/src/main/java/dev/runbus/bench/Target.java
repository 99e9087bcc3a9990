package dev.runbus.bench;

/**
 * Where one measurement happens: a stream of its own (runbus's key layout, so that runbus can read it too)
 * and the one consumer group every consumer joins.
 */
public record Target(String prefix, String topic, String group) {

    public String streamKey() {
        return prefix + ":{" + topic + "}:stream";
    }

    /** Every key of this target (runbus also keeps dead letters and heartbeats under it). */
    public String keyPattern() {
        return prefix + ":{" + topic + "}:*";
    }
}
