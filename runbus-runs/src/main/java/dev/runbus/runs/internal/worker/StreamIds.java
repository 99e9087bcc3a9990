package dev.runbus.runs.internal.worker;

/**
 * Redis stream ids ({@code <milliseconds>-<sequence>}) as the runs layer reads them: their time, and their
 * order, which is numeric in both parts (as text "…-9" would come after "…-10"). Ids of a topic of several
 * partitions carry their partition after an {@code @} ({@code 1700000000000-0@3}); it orders after the time and
 * the sequence, which are comparable across partitions only as times.
 */
public final class StreamIds {

    private StreamIds() {
    }

    /** The milliseconds part; an id without a sequence is all milliseconds. */
    public static long millis(String id) {
        String plain = withoutPartition(id);
        int dash = plain.indexOf('-');
        return Long.parseLong(dash < 0 ? plain : plain.substring(0, dash));
    }

    /** Negative, zero or positive as {@code a} comes before, is, or comes after {@code b} in a stream. */
    public static int compare(String a, String b) {
        int byMillis = Long.compare(millis(a), millis(b));
        if (byMillis != 0) {
            return byMillis;
        }
        int bySequence = Long.compare(sequence(a), sequence(b));
        return bySequence != 0 ? bySequence : Integer.compare(partition(a), partition(b));
    }

    private static long sequence(String id) {
        String plain = withoutPartition(id);
        int dash = plain.indexOf('-');
        return dash < 0 ? 0 : Long.parseLong(plain.substring(dash + 1));
    }

    private static int partition(String id) {
        int at = id.lastIndexOf('@');
        return at < 0 ? 0 : Integer.parseInt(id.substring(at + 1));
    }

    private static String withoutPartition(String id) {
        int at = id.lastIndexOf('@');
        return at < 0 ? id : id.substring(0, at);
    }
}
