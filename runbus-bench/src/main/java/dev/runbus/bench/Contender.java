package dev.runbus.bench;

/**
 * One way a Java user could consume a Redis stream with a consumer group. A contender is opened once per
 * scenario (clients and pools are built then, not while a measurement runs) and starts consumers for each
 * measurement on a stream of that measurement's own.
 */
public interface Contender extends AutoCloseable {

    /** Short name, the row label of the report. */
    String name();

    /** How it reads and acknowledges, for the report's method section. */
    String describe();

    /** The first part of every key this contender's measurements use; unique per contender and process. */
    String keyPrefix();

    /**
     * Starts {@code consumers} consumers in {@code target.group()} of {@code target.streamKey()} (the group
     * exists), each calling a no-op handler, reporting to {@code probe}. Returns once they are reading.
     */
    Consumers start(Target target, int consumers, Probe probe) throws Exception;

    /** Releases clients and pools. */
    @Override
    void close();

    /** Running consumers; {@link #close()} stops them and waits until they have stopped. */
    interface Consumers extends AutoCloseable {
        @Override
        void close();
    }
}
