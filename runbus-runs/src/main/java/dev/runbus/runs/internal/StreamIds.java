package dev.runbus.runs.internal;

/**
 * Redis stream ids ({@code <milliseconds>-<sequence>}) as the runs layer reads them: their time, and their
 * order, which is numeric in both parts (as text "…-9" would come after "…-10").
 */
final class StreamIds {

    private StreamIds() {
    }

    /** The milliseconds part; an id without a sequence is all milliseconds. */
    static long millis(String id) {
        int dash = id.indexOf('-');
        return Long.parseLong(dash < 0 ? id : id.substring(0, dash));
    }

    /** Negative, zero or positive as {@code a} comes before, is, or comes after {@code b} in a stream. */
    static int compare(String a, String b) {
        int byMillis = Long.compare(millis(a), millis(b));
        return byMillis != 0 ? byMillis : Long.compare(sequence(a), sequence(b));
    }

    private static long sequence(String id) {
        int dash = id.indexOf('-');
        return dash < 0 ? 0 : Long.parseLong(id.substring(dash + 1));
    }
}
