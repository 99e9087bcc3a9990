package dev.runbus.testkit;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits for a condition with a deadline; never a fixed sleep standing in for synchronisation. */
public final class Wait {

    private Wait() {
    }

    public static void until(String what, Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
            }
            pause();
        }
    }

    /** Waits until the supplier's value satisfies the condition and returns it. */
    public static <T> T until(String what, Duration timeout, Supplier<T> value, java.util.function.Predicate<T> ok) {
        long deadline = System.nanoTime() + timeout.toNanos();
        T v = value.get();
        while (!ok.test(v)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for: " + what + " (last: " + v + ")");
            }
            pause();
            v = value.get();
        }
        return v;
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
