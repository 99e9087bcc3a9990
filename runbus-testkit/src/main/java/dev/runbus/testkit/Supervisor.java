package dev.runbus.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;

/**
 * Starts a child JVM again each time it dies, as a process supervisor would, until one lives on while {@code done}
 * holds; then kills that one. For tests of a process that a message kills.
 */
public final class Supervisor {

    /** How many times the child died, and the output lines of every child, in order. */
    public record Run(int deaths, List<String> lines) {

        public long count(String line) {
            return lines.stream().filter(line::equals).count();
        }
    }

    private Supervisor() {
    }

    /**
     * Runs children made by {@code start} until {@code done}; fails when more than {@code maxDeaths} died, or when one
     * neither died nor got done within {@code patience}. Each child is handed to {@code started} (to be killed at the
     * test's end whatever happens).
     */
    public static Run untilDone(Callable<ChildJvm> start, java.util.function.Consumer<ChildJvm> started,
                                BooleanSupplier done, int maxDeaths, Duration patience) throws Exception {
        int deaths = 0;
        List<String> lines = new ArrayList<>();
        while (true) {
            ChildJvm c = start.call();
            started.accept(c);
            Wait.until("the child died, or got done", patience, () -> !c.isAlive() || done.getAsBoolean());
            boolean gotDone = c.isAlive();
            // Ends the one that got done, and reads any child's output to its end before it is counted: what a
            // child wrote before acking may still be in the pipe when its acks already made the test's condition hold.
            c.kill();
            lines.addAll(c.lines());
            if (gotDone) {
                return new Run(deaths, lines);
            }
            deaths++;
            assertThat(deaths).as("deaths so far; output of the last: " + c.lines()).isLessThanOrEqualTo(maxDeaths);
        }
    }
}
