package dev.runbus.bench;

import java.util.Locale;
import java.util.function.DoubleFunction;

/** How figures are written in the report. */
final class Fmt {

    private Fmt() {
    }

    /** Messages or runs per second: {@code 131k}, {@code 9.8k}, {@code 850}. */
    static String rate(double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        if (v >= 10_000) {
            return String.format(Locale.ROOT, "%.0fk", v / 1_000);
        }
        if (v >= 1_000) {
            return String.format(Locale.ROOT, "%.1fk", v / 1_000);
        }
        return String.format(Locale.ROOT, "%.0f", v);
    }

    /** Milliseconds with three significant digits: {@code 0.412}, {@code 3.05}, {@code 118}. */
    static String ms(double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        if (v < 1) {
            return String.format(Locale.ROOT, "%.3f", v);
        }
        if (v < 10) {
            return String.format(Locale.ROOT, "%.2f", v);
        }
        if (v < 100) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.0f", v);
    }

    static String seconds(double v) {
        return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.2f s", v);
    }

    static String ratio(double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        return String.format(Locale.ROOT, v >= 10 ? "%.1f×" : "%.2f×", v);
    }

    static String percent(double v) {
        return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.1f%%", v * 100);
    }

    static String mb(double v) {
        return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.1f MB", v + 0.0).replace("-0.0 ", "0.0 ");
    }

    /** {@code median (min–max)}; just the median when there is one value. */
    static String summary(Stats.Summary s, DoubleFunction<String> f) {
        if (s.isEmpty()) {
            return "—";
        }
        if (s.n() == 1 || s.min() == s.max()) {
            return f.apply(s.median());
        }
        return f.apply(s.median()) + " (" + f.apply(s.min()) + "–" + f.apply(s.max()) + ")";
    }

    /** Each round's value in the order of the rounds: {@code 0.61×, 0.58×, —}. */
    static String rounds(java.util.List<Double> values, DoubleFunction<String> f) {
        java.util.List<String> out = new java.util.ArrayList<>();
        values.forEach(v -> out.add(f.apply(v)));
        return out.isEmpty() ? "—" : String.join(", ", out);
    }
}
