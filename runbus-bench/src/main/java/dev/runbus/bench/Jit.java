package dev.runbus.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * How much time the JIT compilers have spent so far. On two cores a C2 compiler thread busy with the code under
 * test takes a large share of the CPU the measurement needs, so warm-ups go on until it has settled.
 */
final class Jit {

    private static final CompilationMXBean BEAN = ManagementFactory.getCompilationMXBean();

    private Jit() {
    }

    /** One round of warm-up work. */
    @FunctionalInterface
    interface Round {
        void run() throws Exception;
    }

    /** Warm-up rounds stop once the JIT compiled for less than this share of a round's time. */
    static final double SETTLED = 0.10;
    /** At most this many warm-up rounds, unless a scenario says otherwise. */
    static final int MAX_ROUNDS = 6;

    /** {@link #settle(String, int, Round)} with at most {@link #MAX_ROUNDS} rounds. */
    static void settle(String what, Round round) throws Exception {
        settle(what, MAX_ROUNDS, round);
    }

    /**
     * Runs warm-up rounds until the JIT has settled (compiled for less than {@link #SETTLED} of a round's time),
     * at most {@code maxRounds}, saying how much each round compiled.
     */
    static void settle(String what, int maxRounds, Round round) throws Exception {
        for (int i = 1; i <= maxRounds; i++) {
            long jit = millis();
            long t0 = System.nanoTime();
            round.run();
            double share = (millis() - jit) / ((System.nanoTime() - t0) / 1e6);
            Progress.say("%s: warm-up round %d, JIT compiling %.0f%% of the time", what, i, 100 * share);
            if (share < SETTLED) {
                return;
            }
        }
        Progress.say("%s: the JIT had not settled after %d warm-up rounds; measuring anyway", what, maxRounds);
    }

    /** Milliseconds of compilation so far (summed over compiler threads), or 0 when the JVM does not say. */
    static long millis() {
        return BEAN != null && BEAN.isCompilationTimeMonitoringSupported() ? BEAN.getTotalCompilationTime() : 0;
    }
}
