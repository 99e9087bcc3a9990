package dev.runbus.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Median, minimum and maximum of repeated measurements; NaN marks a measurement that failed and is left out. */
public final class Stats {

    private Stats() {
    }

    /** The figure of one measured quantity: median and range over the repeats that succeeded. */
    public record Summary(double median, double min, double max, int n) {

        public static final Summary NONE = new Summary(Double.NaN, Double.NaN, Double.NaN, 0);

        public boolean isEmpty() {
            return n == 0;
        }
    }

    public static Summary of(List<Double> values) {
        List<Double> v = new ArrayList<>();
        for (Double d : values) {
            if (d != null && !d.isNaN()) {
                v.add(d);
            }
        }
        if (v.isEmpty()) {
            return Summary.NONE;
        }
        Collections.sort(v);
        int n = v.size();
        double median = n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
        return new Summary(median, v.get(0), v.get(n - 1), n);
    }

    /**
     * Ratios of paired measurements, a[i] / b[i], taken in the same round of the same run (so they share the
     * machine's noise of that moment). Pairs with a missing side are left out.
     */
    public static Summary pairedRatio(List<Double> a, List<Double> b) {
        return of(ratios(a, b));
    }

    /** The ratio a[i] / b[i] of each round, in the order of the rounds; NaN where a side is missing. */
    public static List<Double> ratios(List<Double> a, List<Double> b) {
        List<Double> r = new ArrayList<>();
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            double x = a.get(i);
            double y = b.get(i);
            r.add(Double.isNaN(x) || Double.isNaN(y) || y == 0 ? Double.NaN : x / y);
        }
        return r;
    }
}
