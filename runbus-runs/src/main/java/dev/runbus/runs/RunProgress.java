package dev.runbus.runs;

/**
 * Where a run handler reports how far it got ({@link RunContext#progress(int, String)}): the worker keeps the latest
 * report of each run and writes it at most once a second, visible in {@link Run#progress()}, {@code GET /v1/runs/{id}}
 * and the dashboard.
 */
@FunctionalInterface
public interface RunProgress {

    /** Reports nothing: a context made by hand (a handler's unit test). */
    RunProgress NONE = (percent, details) -> {
    };

    /**
     * @param percent 0 to 100
     * @param details what is going on, or null; kept to {@link Run#MAX_ERROR_LENGTH} characters without control
     *                characters other than newline and tab
     * @throws IllegalArgumentException when {@code percent} is outside 0 to 100
     */
    void report(int percent, String details);
}
