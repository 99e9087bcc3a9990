package dev.runbus.bench;

import java.util.Locale;

/** Progress lines on standard output, stamped with the time since the benchmark started. */
final class Progress {

    private static final long START = System.nanoTime();

    private Progress() {
    }

    static void say(String format, Object... args) {
        long s = (System.nanoTime() - START) / 1_000_000_000L;
        System.out.printf(Locale.ROOT, "[%02d:%02d] %s%n", s / 60, s % 60, String.format(Locale.ROOT, format, args));
        System.out.flush();
    }
}
