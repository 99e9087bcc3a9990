package dev.runbus.server.web;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** How the pages write times and durations: short, and the same on every page. */
final class Format {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'")
            .withZone(ZoneOffset.UTC);

    private Format() {
    }

    /** {@code 350 ms}, {@code 4.2 s}, {@code 3 min}, {@code 5 h}, {@code 2 d}; negative as zero. */
    static String age(long millis) {
        long ms = Math.max(0, millis);
        if (ms < 1_000) {
            return ms + " ms";
        }
        if (ms < 60_000) {
            return String.format(java.util.Locale.ROOT, "%.1f s", ms / 1000.0);
        }
        if (ms < 3_600_000) {
            return ms / 60_000 + " min";
        }
        if (ms < 86_400_000) {
            return ms / 3_600_000 + " h";
        }
        return ms / 86_400_000 + " d";
    }

    static String time(Instant t) {
        return TIME.format(t);
    }
}
