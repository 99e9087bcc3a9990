package dev.runbus.testkit;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits for a condition with a deadline; never a fixed sleep standing in for synchronisation. A deadline only
 * bounds how long a failure takes to show, so it scales with the machine's load: a wait that starts while more
 * runnable work than cores is queued ({@code /proc/loadavg}) gets its timeout times load ÷ cores, at most 4 times
 * (a suite beside two CPU-bound processes on two cores runs at a load of 10 to 20). A condition met in time ends
 * the wait as before.
 */
public final class Wait {

    /** The most a timeout is stretched. */
    static final double MAX_STRETCH = 4;

    private Wait() {
    }

    public static void until(String what, Duration timeout, BooleanSupplier condition) {
        Duration patience = scaled(timeout);
        long deadline = System.nanoTime() + patience.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + describe(timeout, patience) + " waiting for: " + what);
            }
            pause();
        }
    }

    /** Waits until the supplier's value satisfies the condition and returns it. */
    public static <T> T until(String what, Duration timeout, Supplier<T> value, java.util.function.Predicate<T> ok) {
        Duration patience = scaled(timeout);
        long deadline = System.nanoTime() + patience.toNanos();
        T v = value.get();
        while (!ok.test(v)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + describe(timeout, patience) + " waiting for: " + what
                        + " (last: " + v + ")");
            }
            pause();
            v = value.get();
        }
        return v;
    }

    /** {@code timeout} times the load per core now, between 1 and {@link #MAX_STRETCH}. */
    public static Duration scaled(Duration timeout) {
        double stretch = Math.max(1, Math.min(MAX_STRETCH, loadPerCore()));
        return Duration.ofNanos((long) (timeout.toNanos() * stretch));
    }

    /** The deadline as it was set: the stretch is derived from the two, not read again from a load that moved on. */
    private static String describe(Duration timeout, Duration patience) {
        return patience.equals(timeout) ? timeout.toString()
                : patience + " (" + timeout + " × " + String.format("%.1f", (double) patience.toNanos()
                        / timeout.toNanos()) + " for the machine's load)";
    }

    /** The one-minute load average per core; 0 where it cannot be read (not Linux). */
    private static double loadPerCore() {
        try {
            String[] fields = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim().split("\\s+");
            return Double.parseDouble(fields[0]) / Runtime.getRuntime().availableProcessors();
        } catch (java.io.IOException | RuntimeException e) {
            return 0;
        }
    }

    private static void pause() {
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
