package dev.runbus.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

/**
 * The order an ordered group promises, checked on what its handlers ran: each key's entries in stream order, a
 * repeat (at-least-once) only of the entry that ran last. Compared by stream id rather than by what the payload
 * says, so that a publisher's own repeat (a publish re-sent after a timeout appends a second, later entry) is a
 * later entry, not a step back.
 */
public final class StreamOrder {

    private StreamOrder() {
    }

    /** {@code byKey}: each key's stream ids ({@code ms-seq}, with or without {@code @partition}) as they ran. */
    public static void assertInStreamOrder(String what, Map<String, List<String>> byKey) {
        byKey.forEach((key, ids) -> {
            for (int i = 1; i < ids.size(); i++) {
                assertThat(compare(ids.get(i), ids.get(i - 1)))
                        .as("%s: key %s ran %s, entry %d before the one run before it", what, key, ids, i)
                        .isGreaterThanOrEqualTo(0);
            }
        });
    }

    /** Compares two stream ids of one partition. */
    public static int compare(String a, String b) {
        long[] x = parse(a);
        long[] y = parse(b);
        return x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[1], y[1]);
    }

    private static long[] parse(String id) {
        int at = id.indexOf('@');
        String plain = at < 0 ? id : id.substring(0, at);
        int dash = plain.indexOf('-');
        return new long[] {Long.parseLong(plain.substring(0, dash)), Long.parseLong(plain.substring(dash + 1))};
    }
}
